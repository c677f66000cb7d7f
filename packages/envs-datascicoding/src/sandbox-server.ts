import { type ChildProcess, spawn } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  commandLine,
  emptyRun,
  isRoot,
  minimalEnv,
  NOBODY,
  prepareDirectory,
  probeFailure,
  probeRequest,
  type SandboxRequest,
  type SandboxRun,
  signalName,
} from './launch.js';
import { RUNNER_SOURCE } from './runner-source.js';
import type { ScoringRule } from './seeding.js';

/*
 * The fork server: one warm Python per concurrent run, started once, with numpy, SciPy and
 * scikit-learn imported. Each `ns` run is a child it forks; the child enters new namespaces
 * itself and the runner continues as process 1 of the new PID namespace, exactly as a run
 * started through `unshare` does (runner-source.ts, `serve`). This saves the interpreter start
 * and the imports of every run — for a small program most of its time.
 *
 * Protocol. Node writes one JSON line per request on the server's stdin: `{"box", "mode"}` starts
 * a run in that directory, `{"kill": true}` stops the running one (its process group). The server
 * answers on descriptor 4 with one JSON line per event: `ready` once, then `started` and `done`
 * (exit status) per run. stdout, stderr and the result pipe (descriptor 3) are shared by the runs
 * in turn: after every sandboxed process of a run has exited, the server ends each of the three
 * streams with a line holding a fresh random nonce, which it also sends in the `done` event. A
 * run's output is what precedes that line; a program cannot forge it, since the nonce is drawn
 * after the program is gone.
 */

/** In the command line of every fork server (and of its children until they exec). */
export const SERVER_MARKER = 'poad-dsc-server';

/** An idle server exits after this long without a run. */
const IDLE_MS = 30_000;
/** Start-up (interpreter, imports) and the namespace probe must finish within this. */
const START_TIMEOUT_MS = 120_000;
/** A run that does not end this long after it was told to stop takes its server with it. */
const KILL_GRACE_MS = 5_000;
/** The end-of-segment line: `\npoad-dsc-end-` + 32 hex digits + `\n`. */
const MARK_LENGTH = 47;

function segmentEnd(nonce: string): Buffer {
  return Buffer.from(`\npoad-dsc-end-${nonce}\n`);
}

/** What one of the server's streams carried for the current run (or start-up). */
class Segment {
  private readonly chunks: Buffer[] = [];
  private stored = 0;
  /** Bytes received, end line included. */
  total = 0;
  private tail: Buffer = Buffer.alloc(0);

  /** Adds `chunk`, storing at most `room` of its bytes; returns how many were stored. */
  push(chunk: Buffer, room: number): number {
    this.total += chunk.length;
    const keep = Math.max(0, Math.min(room, chunk.length));
    if (keep > 0) {
      this.chunks.push(chunk.subarray(0, keep));
      this.stored += keep;
    }
    const last = chunk.length >= MARK_LENGTH ? chunk.subarray(-MARK_LENGTH) : chunk;
    this.tail = Buffer.concat([this.tail, last]).subarray(-MARK_LENGTH);
    return keep;
  }

  endsWith(end: Buffer): boolean {
    return this.tail.equals(end);
  }

  /** Bytes the run itself wrote (received minus the end line). */
  get own(): number {
    return Math.max(0, this.total - MARK_LENGTH);
  }

  /** Every stored byte (for a segment cut short, which has no end line). */
  received(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** The stored bytes that precede the end line. */
  contents(): Buffer {
    return Buffer.concat(this.chunks).subarray(0, Math.min(this.stored, this.own));
  }
}

interface ServerEvent {
  ready?: boolean;
  started?: boolean;
  done?: boolean;
  code?: number;
  nonce?: string;
}

/** A segment in progress: its three streams, and what to do with them once it ends. */
interface Phase {
  streams: [Segment, Segment, Segment];
  onData(stream: 0 | 1 | 2, chunk: Buffer, segment: Segment): void;
  /** The closing event (`ready` or `done`), once it has arrived. */
  closing: ServerEvent | null;
  complete(event: ServerEvent): void;
  serverGone(why: string): void;
}

let serverCounter = 0;
const everyServer = new Set<ForkServer>();

class ForkServer {
  private phase: Phase | null = null;
  private events = '';
  private exitWhy: string | null = null;
  /** False once the server exited or was killed: it is not reused. */
  healthy = true;
  idleTimer: NodeJS.Timeout | undefined;

  private constructor(readonly child: ChildProcess) {
    everyServer.add(this);
    const streams = [child.stdout, child.stderr, child.stdio[3]] as Readable[];
    streams.forEach((stream, i) => {
      stream.on('data', (chunk: Buffer) => this.onData(i as 0 | 1 | 2, chunk));
    });
    (child.stdio[4] as Readable).on('data', (chunk: Buffer) => this.onEvents(chunk));
    child.on('error', (err) => this.gone(`the fork server could not start: ${err.message}`));
    // 'close' comes once the server's output has been read to the end (so its last words are
    // in the message); 'exit' alone does not wait for that, but must not wait forever either.
    child.on('exit', (code, signal) => {
      const why = `the fork server exited (code ${code}, signal ${signal})`;
      child.once('close', () => this.gone(why));
      setTimeout(() => this.gone(why), 2000).unref();
    });
    // Idle servers must not keep Node alive; a run in progress holds its own timer. A write to
    // a server that just died fails with EPIPE: its exit is handled above.
    child.unref();
    for (const stream of [...streams, child.stdin, child.stdio[4]]) {
      stream?.on('error', () => {});
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
  }

  /**
   * Starts a server for `python` and waits until it has imported everything. Its hash seed is
   * the one of `scoring` (fixed under `seeded-v1`, random under `os-seeded`), and so is that of
   * every run it forks: a server serves runs of one rule only.
   */
  static async start(
    python: string,
    tmpDir: string | undefined,
    scoring: ScoringRule,
  ): Promise<ForkServer> {
    const dir = await mkdtemp(join(tmpDir ?? tmpdir(), 'poad-dsc-server-'));
    try {
      const runner = join(dir, 'runner.py');
      await writeFile(runner, RUNNER_SOURCE);
      if (isRoot()) {
        // The server runs as `nobody` and must read its script.
        await chown(runner, NOBODY, NOBODY);
        await chown(dir, NOBODY, NOBODY);
      }
      const marker = `${SERVER_MARKER}-${process.pid}-${++serverCounter}`;
      const argv = commandLine('serve', python, runner, marker, scoring);
      const child = spawn(argv[0] as string, argv.slice(1), {
        cwd: dir,
        env: minimalEnv('/sandbox', scoring),
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      });
      const server = new ForkServer(child);
      try {
        await server.waitReady();
      } catch (err) {
        server.destroy();
        throw err;
      }
      return server;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private gone(why: string): void {
    if (this.exitWhy !== null) return;
    this.exitWhy = why;
    this.healthy = false;
    everyServer.delete(this);
    const phase = this.phase;
    this.phase = null;
    phase?.serverGone(why);
  }

  /** Kills the server (its children die with it: parent-death signals). */
  destroy(): void {
    this.healthy = false;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.child.pid !== undefined && this.exitWhy === null) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    everyServer.delete(this);
  }

  private send(message: object): void {
    this.child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  private onData(stream: 0 | 1 | 2, chunk: Buffer): void {
    const phase = this.phase;
    if (!phase) return;
    phase.onData(stream, chunk, phase.streams[stream]);
    this.check();
  }

  private onEvents(chunk: Buffer): void {
    this.events += chunk.toString('utf8');
    let newline = this.events.indexOf('\n');
    while (newline >= 0) {
      const line = this.events.slice(0, newline);
      this.events = this.events.slice(newline + 1);
      newline = this.events.indexOf('\n');
      let event: ServerEvent;
      try {
        event = JSON.parse(line) as ServerEvent;
      } catch {
        continue;
      }
      if ((event.ready || event.done) && this.phase && typeof event.nonce === 'string') {
        this.phase.closing = event;
        this.check();
      }
    }
  }

  /** Ends the phase once its closing event and the three end lines have all arrived. */
  private check(): void {
    const phase = this.phase;
    if (!phase?.closing) return;
    const end = segmentEnd(phase.closing.nonce as string);
    if (!phase.streams.every((s) => s.endsWith(end))) return;
    this.phase = null;
    phase.complete(phase.closing);
  }

  private newStreams(): [Segment, Segment, Segment] {
    return [new Segment(), new Segment(), new Segment()];
  }

  private waitReady(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.phase = null;
        reject(new Error(`the fork server did not start within ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      const phase: Phase = {
        streams: this.newStreams(),
        closing: null,
        // Start-up writes nothing of interest; a little stderr is kept for the error message.
        onData: (stream, chunk, segment) => void segment.push(chunk, stream === 1 ? 4096 : 0),
        complete: () => {
          clearTimeout(timer);
          resolve();
        },
        serverGone: (why) => {
          clearTimeout(timer);
          const said = phase.streams[1].received().toString('utf8').trim().split('\n').pop();
          reject(new Error(said ? `${why}: ${said}` : why));
        },
      };
      this.phase = phase;
    });
  }

  /** Runs the request whose directory is `box` (one run at a time per server). */
  run(req: SandboxRequest, box: string, started: number): Promise<SandboxRun> {
    const { limits } = req;
    return new Promise((resolve) => {
      let ending: SandboxRun['ending'] = 'exited';
      let killTimer: NodeJS.Timeout | undefined;
      let outputStored = 0;
      let outputSeen = 0;
      let resultStored = 0;
      const stop = (why: SandboxRun['ending']): void => {
        if (ending === 'exited') ending = why;
        if (killTimer) return;
        this.send({ kill: true });
        // A run that does not end soon after being told to stop takes the server with it.
        killTimer = setTimeout(() => this.destroy(), KILL_GRACE_MS);
      };
      const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
      const onAbort = (): void => stop('aborted');
      const cleanUp = (): void => {
        clearTimeout(timer);
        if (killTimer) clearTimeout(killTimer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      const phase: Phase = {
        streams: this.newStreams(),
        closing: null,
        onData: (stream, chunk, segment) => {
          if (stream === 2) {
            resultStored += segment.push(chunk, limits.maxResultBytes - resultStored);
            // An end line may be among the bytes seen; beyond it they are the program's.
            if (segment.total > limits.maxResultBytes + MARK_LENGTH) stop('result-limit');
            return;
          }
          outputStored += segment.push(chunk, limits.maxOutputBytes - outputStored);
          outputSeen += chunk.length;
          if (outputSeen > limits.maxOutputBytes + 2 * MARK_LENGTH) stop('output-limit');
        },
        complete: (event) => {
          cleanUp();
          resolve(this.finishRun(phase.streams, event, ending, limits, started));
        },
        serverGone: (why) => {
          cleanUp();
          resolve(emptyRun(ending === 'exited' ? 'spawn-failed' : ending, why, started));
        },
      };
      if (req.signal?.aborted) {
        cleanUp();
        resolve(emptyRun('aborted', '', started));
        return;
      }
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.phase = phase;
      this.send({ box, mode: req.mode });
    });
  }

  /** The run's result from its three segments and the `done` event. */
  private finishRun(
    streams: [Segment, Segment, Segment],
    done: ServerEvent,
    stoppedAs: SandboxRun['ending'],
    limits: SandboxRequest['limits'],
    started: number,
  ): SandboxRun {
    const [out, err, res] = streams;
    let ending = stoppedAs;
    // The caps apply to the run's own bytes (the end lines excluded).
    if (ending === 'exited' && out.own + err.own > limits.maxOutputBytes) ending = 'output-limit';
    if (ending === 'exited' && res.own > limits.maxResultBytes) ending = 'result-limit';
    const resultBytes = res.contents();
    let result: unknown = null;
    let resultUnreadable = false;
    if (resultBytes.length > 0 && ending !== 'result-limit') {
      try {
        result = JSON.parse(resultBytes.toString('utf8'));
      } catch {
        resultUnreadable = true;
      }
    }
    let exitCode: number | null = typeof done.code === 'number' ? done.code : null;
    let signal: NodeJS.Signals | null = null;
    if (exitCode !== null) {
      // Negative: the launching child was killed by that signal; above 128: the namespace's
      // first process reports a killed program as 128 + signal number.
      const name =
        exitCode < 0 ? signalName(-exitCode) : exitCode > 128 ? signalName(exitCode - 128) : null;
      if (name) {
        signal = name;
        exitCode = null;
      }
    }
    return {
      ending,
      result,
      resultUnreadable,
      exitCode,
      signal,
      stdout: out.contents().toString('utf8'),
      stderr: err.contents().toString('utf8'),
      durationMs: performance.now() - started,
    };
  }
}

// ------------------------------------------------------------------------------- the servers

const idle = new Map<string, ForkServer[]>();
const unavailable = new Map<string, string>();

function keyOf(python: string, tmpDir: string | undefined, scoring: ScoringRule): string {
  return `${python}\0${tmpDir ?? ''}\0${scoring}`;
}

/**
 * Why runs for `python` (and `tmpDir`) start a new interpreter instead of forking from a server
 * (the server did not start or failed its namespace probe), or null when they fork.
 */
export function forkServerProblem(
  python: string,
  tmpDir?: string,
  scoring: ScoringRule = 'seeded-v1',
): string | null {
  return unavailable.get(keyOf(python, tmpDir, scoring)) ?? null;
}

/** Stops every fork server of this process (they also stop by themselves when idle). */
export function closeForkServers(): void {
  for (const server of [...everyServer]) server.destroy();
  idle.clear();
}

process.once('exit', closeForkServers);

/** A started server that passed the namespace probe, or throws why not. */
async function startServer(
  python: string,
  tmpDir: string | undefined,
  scoring: ScoringRule,
): Promise<ForkServer> {
  const server = await ForkServer.start(python, tmpDir, scoring);
  const probe = probeRequest(python, tmpDir, START_TIMEOUT_MS);
  const { work, box } = await prepareDirectory(probe);
  try {
    const why = probeFailure(await server.run(probe, box, performance.now()));
    if (why !== null) {
      server.destroy();
      throw new Error(`the fork server's namespace probe failed: ${why}`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return server;
}

/**
 * Runs an `ns` request on an idle fork server (starting one when none is idle). Resolves to
 * null when no server can be had here, so that the caller starts a new interpreter instead.
 */
export async function runOnForkServer(
  req: SandboxRequest,
  box: string,
  started: number,
): Promise<SandboxRun | null> {
  const scoring = req.scoring ?? 'seeded-v1';
  const key = keyOf(req.python, req.tmpDir, scoring);
  if (unavailable.has(key)) return null;
  const waiting = idle.get(key) ?? [];
  let server: ForkServer | undefined;
  while (!server?.healthy) {
    server = waiting.pop();
    if (!server) break;
  }
  if (server) {
    clearTimeout(server.idleTimer);
  } else {
    try {
      server = await startServer(req.python, req.tmpDir, scoring);
    } catch (err) {
      unavailable.set(key, (err as Error).message);
      return null;
    }
  }
  const run = await server.run(req, box, started);
  if (server.healthy) {
    const ready = server;
    ready.idleTimer = setTimeout(() => {
      const list = idle.get(key) ?? [];
      const at = list.indexOf(ready);
      if (at >= 0) list.splice(at, 1);
      ready.destroy();
    }, IDLE_MS);
    ready.idleTimer.unref();
    waiting.push(ready);
    idle.set(key, waiting);
  } else {
    server.destroy();
  }
  return run;
}
