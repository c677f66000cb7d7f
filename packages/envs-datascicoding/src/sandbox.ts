import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSciOptionError } from './errors.js';
import {
  commandLine,
  emptyRun,
  findTool,
  isRoot,
  minimalEnv,
  prepareDirectory,
  SANDBOX_MARKER,
  type SandboxRequest,
  type SandboxRun,
  signalName,
} from './launch.js';
import { runOnForkServer } from './sandbox-server.js';

export {
  type IsolationMode,
  type RunnerMode,
  SANDBOX_MARKER,
  type SandboxRequest,
  type SandboxRun,
} from './launch.js';

let runCounter = 0;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/**
 * Runs the runner once in a fresh temporary directory, enforcing the wall-clock timeout and
 * output caps from here, and removes the directory afterwards. An `ns` run is forked from a warm
 * fork server when one can be started (see `sandbox-server.ts`); otherwise the runner starts as
 * a new interpreter in a new process group. Never blocks the event loop: everything is
 * asynchronous child-process I/O.
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
  try {
    if (req.mode === 'ns' && req.forkServer !== false) {
      const served = await runOnForkServer(req, box, started);
      if (served) return served;
    }
    const marker = `${SANDBOX_MARKER}-${process.pid}-${++runCounter}`;
    const argv = commandLine(req.mode, req.python, join(box, 'runner.py'), marker, req.scoring);
    const home = req.mode === 'basic' ? box : '/sandbox';
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
        env: minimalEnv(home, req.scoring),
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
