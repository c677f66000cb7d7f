import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dataset } from './datasets.js';
import { DataSciOptionError } from './errors.js';
import type { SandboxLimits } from './limits.js';
import { RUNNER_SOURCE } from './runner-source.js';

/** Appears in the command line of every sandboxed process (lets tests find leftovers). */
export const SANDBOX_MARKER = 'poad-dsc-sandbox';

/** How a run is isolated: Linux namespaces + private root, or the basic fallback. */
export type IsolationMode = 'namespaces' | 'basic';

/** What the runner is asked to do: `probe` tests the namespace setup without running code. */
export type RunnerMode = 'ns' | 'basic' | 'probe';

/** How a sandboxed run ended, before its result is interpreted. */
export interface SandboxRun {
  /** `exited`: the process ended by itself; the others: it was stopped by the caller. */
  ending: 'exited' | 'timeout' | 'output-limit' | 'result-limit' | 'aborted' | 'spawn-failed';
  /** Parsed JSON written by the runner to descriptor 3, or null when none / unparsable. */
  result: unknown;
  /** True when something was written to descriptor 3 but it was not valid JSON. */
  resultUnreadable: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Head of stdout and stderr (up to the output cap). */
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Everything a run needs. */
export interface SandboxRequest {
  mode: RunnerMode;
  /** Complete Python module defining `build_model` (empty for `probe`). */
  source: string;
  dataset: Pick<Dataset, 'n' | 'd' | 'x' | 'y' | 'splits'>;
  limits: SandboxLimits;
  python: string;
  /** Parent directory of the per-run temporary directories. */
  tmpDir?: string;
  signal?: AbortSignal;
}

const NOBODY = 65534;
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];
let runCounter = 0;

function findTool(name: string): string | null {
  for (const dir of SYSTEM_BIN) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return null;
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/** The command line that starts the runner for `mode` (see the README for the layers). */
function commandLine(mode: RunnerMode, python: string, runner: string, tag: string): string[] {
  const chain: string[] = [];
  const prlimit = findTool('prlimit');
  if (prlimit) chain.push(prlimit, '--core=0', '--');
  const setpriv = findTool('setpriv');
  if (setpriv) {
    chain.push(setpriv, '--pdeathsig', 'KILL');
    // As root, leave root behind before anything else: the namespaces are then created by
    // `nobody`, so the sandbox's uid 0 is `nobody` outside.
    if (mode !== 'basic' && isRoot()) {
      chain.push(`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups');
    }
    chain.push('--');
  }
  if (mode !== 'basic') {
    const unshare = findTool('unshare') ?? 'unshare';
    chain.push(unshare, '--user', '--map-root-user', '--net', '--mount', '--pid', '--ipc', '--uts');
    chain.push('--cgroup', '--fork');
    chain.push('--kill-child', '--');
  }
  chain.push(python, '-I', '-B', runner, mode, `${SANDBOX_MARKER}-${tag}`);
  return chain;
}

function minimalEnv(home: string): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    OMP_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    // Few malloc arenas: each thread's arena would otherwise reserve 64 MiB of address space,
    // which counts against the memory limit.
    MALLOC_ARENA_MAX: '2',
  };
}

async function prepareDirectory(req: SandboxRequest): Promise<{ work: string; box: string }> {
  const work = await mkdtemp(join(req.tmpDir ?? tmpdir(), 'poad-dsc-'));
  try {
    return await fillDirectory(req, work);
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

async function fillDirectory(
  req: SandboxRequest,
  work: string,
): Promise<{ work: string; box: string }> {
  const box = join(work, 'box');
  await mkdir(box);
  await mkdir(join(work, 'root'));
  const { dataset } = req;
  const task = {
    n: dataset.n,
    d: dataset.d,
    source: req.source,
    splits: dataset.splits,
    limits: {
      memoryMb: req.limits.memoryMb,
      cpuSeconds: req.limits.cpuSeconds,
      fileSizeMb: req.limits.fileSizeMb,
      maxProcesses: req.limits.maxProcesses,
      diskKb: req.limits.diskMb * 1024,
    },
  };
  const y = new BigInt64Array(dataset.y.length);
  for (let i = 0; i < y.length; i++) y[i] = BigInt(dataset.y[i] as number);
  await Promise.all([
    writeFile(join(box, 'runner.py'), RUNNER_SOURCE),
    writeFile(join(box, 'task.json'), JSON.stringify(task)),
    writeFile(
      join(box, 'x.bin'),
      new Uint8Array(dataset.x.buffer, dataset.x.byteOffset, dataset.x.byteLength),
    ),
    writeFile(join(box, 'y.bin'), new Uint8Array(y.buffer)),
  ]);
  if (isRoot()) {
    // The run starts as `nobody`: hand it its own directory and nothing else.
    for (const name of await readdir(box)) await chown(join(box, name), NOBODY, NOBODY);
    for (const dir of [box, join(work, 'root'), work]) await chown(dir, NOBODY, NOBODY);
  }
  return { work, box };
}

/** Sends SIGKILL to the whole process group led by `child` (ignores a group already gone). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/**
 * Runs the runner once in a fresh temporary directory and a new process group, enforcing the
 * wall-clock timeout and output caps from here, and removes the directory afterwards. Never
 * blocks the event loop: everything is asynchronous child-process I/O.
 */
export async function runSandboxed(req: SandboxRequest): Promise<SandboxRun> {
  const started = performance.now();
  if (req.mode !== 'basic' && isRoot() && !findTool('setpriv')) {
    // Without setpriv the namespaces would be created by the real root: refuse instead.
    return emptyRun('spawn-failed', "util-linux's setpriv is needed to leave root first", started);
  }
  let work: string;
  let box: string;
  try {
    ({ work, box } = await prepareDirectory(req));
  } catch (err) {
    throw new DataSciOptionError(
      'tmpDir',
      `cannot prepare a sandbox directory under ${req.tmpDir ?? tmpdir()}: ${(err as Error).message}. Pass an existing, writable directory.`,
    );
  }
  const tag = `${process.pid}-${++runCounter}`;
  const argv = commandLine(req.mode, req.python, join(box, 'runner.py'), tag);
  const home = req.mode === 'basic' ? box : '/sandbox';
  try {
    return await supervise(req, argv, box, home, started);
  } finally {
    await rm(work, { recursive: true, force: true, maxRetries: 3 });
  }
}

function supervise(
  req: SandboxRequest,
  argv: string[],
  box: string,
  home: string,
  started: number,
): Promise<SandboxRun> {
  const { limits } = req;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0] as string, argv.slice(1), {
        cwd: box,
        env: minimalEnv(home),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
    } catch (err) {
      resolve(emptyRun('spawn-failed', String(err), started));
      return;
    }
    let ending: SandboxRun['ending'] = 'exited';
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const result: Buffer[] = [];
    let outputBytes = 0;
    let resultBytes = 0;
    let exitCode: number | null = null;
    let signal: NodeJS.Signals | null = null;
    let settled = false;

    const stop = (why: SandboxRun['ending']): void => {
      if (ending === 'exited') ending = why;
      killGroup(child);
    };
    const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
    const onAbort = (): void => stop('aborted');
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) stop('aborted');

    const collect = (target: Buffer[]) => (chunk: Buffer) => {
      const room = limits.maxOutputBytes - outputBytes;
      if (room > 0) target.push(chunk.subarray(0, room));
      outputBytes += chunk.length;
      if (outputBytes > limits.maxOutputBytes) stop('output-limit');
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));
    const resultStream = child.stdio[3];
    resultStream?.on('data', (chunk: Buffer) => {
      resultBytes += chunk.length;
      if (resultBytes > limits.maxResultBytes) stop('result-limit');
      else result.push(chunk);
    });

    let closeFallback: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (closeFallback) clearTimeout(closeFallback);
      req.signal?.removeEventListener('abort', onAbort);
      let parsed: unknown = null;
      let resultUnreadable = false;
      if (result.length > 0 && ending !== 'result-limit') {
        try {
          parsed = JSON.parse(Buffer.concat(result).toString('utf8'));
        } catch {
          resultUnreadable = true;
        }
      }
      resolve({
        ending,
        result: parsed,
        resultUnreadable,
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        durationMs: performance.now() - started,
      });
    };
    child.on('error', (e) => {
      ending = 'spawn-failed';
      err.push(Buffer.from(String(e)));
      finish();
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      signal = sig;
      if (req.mode !== 'basic' && code !== null && code > 128) {
        // The namespace's first process reports a killed program as 128 + signal number.
        const name = signalName(code - 128);
        if (name) {
          signal = name;
          exitCode = null;
        }
      }
      // Whatever is left in the group (only possible in basic mode) goes with the leader.
      killGroup(child);
      closeFallback = setTimeout(() => {
        for (const stream of [child.stdout, child.stderr, resultStream]) stream?.destroy();
        finish();
      }, 2000);
    });
    child.on('close', finish);
  });
}

function signalName(value: number): NodeJS.Signals | null {
  for (const [name, number] of Object.entries(constants.signals)) {
    if (number === value) return name as NodeJS.Signals;
  }
  return null;
}

function emptyRun(ending: SandboxRun['ending'], stderr: string, started: number): SandboxRun {
  return {
    ending,
    result: null,
    resultUnreadable: false,
    exitCode: null,
    signal: null,
    stdout: '',
    stderr,
    durationMs: performance.now() - started,
  };
}
