import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dataset } from './datasets.js';
import { resolveLimits, type SandboxLimits } from './limits.js';
import { RUNNER_SOURCE } from './runner-source.js';
import { SCORING_HASH_SEED, type ScoringRule } from './seeding.js';

/*
 * What the two ways of starting a sandboxed run share: the request and result types, the
 * launcher chain, the environment allowlist and the per-run directory.
 */

/** Appears in the command line of every sandboxed process (lets tests find leftovers). */
export const SANDBOX_MARKER = 'poad-dsc-sandbox';

/** How a run is isolated: Linux namespaces + private root, or the basic fallback. */
export type IsolationMode = 'namespaces' | 'basic';

/** What the runner is asked to do: `probe` tests the namespace setup without running code. */
export type RunnerMode = 'ns' | 'basic' | 'probe';

/** How the runner is started: one of the run modes, or `serve` for the fork server. */
export type LaunchMode = RunnerMode | 'serve';

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
  /**
   * `ns` runs only: fork the run from a warm interpreter (see `sandbox-server.ts`) instead of
   * starting one (default true; falls back to a fresh interpreter where the server cannot start).
   */
  forkServer?: boolean;
  /**
   * How the program's randomness is seeded (default `seeded-v1`): it decides the interpreter's
   * hash seed (so also which fork server runs it) and, with `seed`, what the runner seeds.
   */
  scoring?: ScoringRule;
  /** `seeded-v1`: the program's seed, 64 hex digits (see `programSeed`); null under `os-seeded`. */
  seed?: string | null;
  /**
   * Load the fork server's libraries before the program's randomness is seeded and its CPU time
   * starts to count, in every launch (a no-op in a forked run, which has them), so that a fresh
   * interpreter's program starts where a forked one does: some imports draw randomness (e.g.
   * multiprocessing's authentication key, 32 bytes of `os.urandom`), and imports take CPU time.
   * Set under `seeded-v1` and under `timeLimit: 'cpu'`.
   */
  preload?: boolean;
  signal?: AbortSignal;
}

export const NOBODY = 65534;
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

export function findTool(name: string): string | null {
  for (const dir of SYSTEM_BIN) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return null;
}

export function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/**
 * The command line that starts the runner for `mode` (see the README for the layers). The fork
 * server (`serve`) gets the same chain without `unshare`: its children enter the namespaces.
 *
 * Under `os-seeded` the interpreter runs isolated (`-I`), which ignores `PYTHONHASHSEED`, so
 * each interpreter hashes strings with a random seed. Under `seeded-v1` it runs with `-s`
 * (no user site directory) instead, so that the environment's fixed `PYTHONHASHSEED` applies:
 * the environment is the allowlist of {@link minimalEnv}, with no other `PYTHON*` variable, and
 * the runner removes its own directory from `sys.path` first, which leaves it as isolated as `-I`.
 */
export function commandLine(
  mode: LaunchMode,
  python: string,
  runner: string,
  marker: string,
  scoring: ScoringRule = 'seeded-v1',
): string[] {
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
  if (mode !== 'basic' && mode !== 'serve') {
    const unshare = findTool('unshare') ?? 'unshare';
    chain.push(unshare, '--user', '--map-root-user', '--net', '--mount', '--pid', '--ipc', '--uts');
    chain.push('--cgroup', '--fork');
    chain.push('--kill-child', '--');
  }
  chain.push(python, ...(scoring === 'os-seeded' ? ['-I'] : ['-s']), '-B', runner, mode, marker);
  return chain;
}

/**
 * The whole environment of a sandboxed interpreter: nothing of Node's own, one thread for the
 * numeric libraries, and under `seeded-v1` the fixed hash seed.
 */
export function minimalEnv(
  home: string,
  scoring: ScoringRule = 'seeded-v1',
): Record<string, string> {
  return {
    ...(scoring === 'os-seeded' ? {} : { PYTHONHASHSEED: SCORING_HASH_SEED }),
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

export async function prepareDirectory(
  req: Pick<SandboxRequest, 'source' | 'dataset' | 'limits' | 'tmpDir' | 'seed' | 'preload'>,
): Promise<{ work: string; box: string }> {
  const work = await mkdtemp(join(req.tmpDir ?? tmpdir(), 'poad-dsc-'));
  try {
    return await fillDirectory(req, work);
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

async function fillDirectory(
  req: Pick<SandboxRequest, 'source' | 'dataset' | 'limits' | 'seed' | 'preload'>,
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
    seed: req.seed ?? null,
    preload: req.preload === true,
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

export function signalName(value: number): NodeJS.Signals | null {
  for (const [name, number] of Object.entries(constants.signals)) {
    if (number === value) return name as NodeJS.Signals;
  }
  return null;
}

export function emptyRun(
  ending: SandboxRun['ending'],
  stderr: string,
  started: number,
): SandboxRun {
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

/** A namespace probe: the runner in `probe` mode, no program, an empty dataset. */
export function probeRequest(python: string, tmpDir: string | undefined, timeoutMs: number) {
  return {
    mode: 'probe' as const,
    source: '',
    dataset: { n: 0, d: 0, x: new Float64Array(0), y: new Int32Array(0), splits: [] },
    limits: resolveLimits({ timeoutMs }),
    python,
    tmpDir,
  };
}

/** Why a probe run failed (its runner's error, else its last line of stderr), or null if it passed. */
export function probeFailure(run: SandboxRun): string | null {
  const result = run.result as { ok?: boolean; probe?: boolean; error?: string } | null;
  if (result?.ok === true && result.probe === true) return null;
  return (
    result?.error ??
    (run.stderr.trim().split('\n').pop() ||
      `the probe ended with ${run.ending} (code ${run.exitCode}, signal ${run.signal})`)
  );
}
