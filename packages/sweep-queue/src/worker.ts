// A worker: takes runs off the queue and trains them with the caller's `run`, refusing runs of
// another code version, handing runs back when asked to stop, and failing a run whose `run`
// throws (once: a run that cannot be trained is not tried again and again).
import { hostname } from 'node:os';
import { type Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { type CodeVersion, versionDifference } from './code-version.js';
import { checkRedis, connectionOf } from './connection.js';
import { DEFAULT_QUEUE, isSweepJobData } from './job.js';
import type { QueueUrl } from './queue-url.js';

/** A run as a worker's `run` gets it. */
export interface WorkerJob<P> {
  readonly sweep: string;
  readonly name: string;
  readonly payload: P;
  /** 1 the first time a worker takes the run; more after a worker stopped or died with it. */
  readonly attempt: number;
}

/**
 * Why a run's signal aborts: `stop`, the worker is stopping (end the run soon, saving what can be
 * continued, and reject: the run goes back to the queue); `lost`, the worker lost the run's lock
 * (another worker may take it: stop at once).
 */
export type AbortReason = 'stop' | 'lost';

export interface StartWorkerOptions<P, R> {
  url: QueueUrl;
  /** The code this worker runs; runs queued from another version are refused. */
  version: CodeVersion;
  /** Runs at once (default 1). */
  concurrency?: number;
  queue?: string;
  /** Shown on the runs it takes (default `host:pid`). */
  name?: string;
  /**
   * Trains one run; what it resolves to goes back to the coordinator (as JSON). A rejection fails
   * the run with the error's message, unless the signal aborted with `stop` (it is queued again).
   */
  run(job: WorkerJob<P>, signal: AbortSignal): Promise<R>;
  log?: (line: string) => void;
  /** A run's lock lasts this long without renewal (default 30 s): a dead worker's run is taken over after it. */
  lockMs?: number;
  /** How often a worker looks for runs whose worker died (default 15 s). */
  stalledCheckMs?: number;
  /** How many times a run may be taken over before it fails (default 2). */
  maxStalls?: number;
}

/** How a worker ended. */
export interface WorkerEnd {
  /** `stopped` by {@link SweepWorker.stop}; `refused` a run of another code version. */
  readonly reason: 'stopped' | 'refused';
  /** Why it refused, naming the run and both versions. */
  readonly refusal?: string;
}

/** A running worker. */
export interface SweepWorker {
  readonly name: string;
  /** Resolves when the worker has closed. */
  readonly ended: Promise<WorkerEnd>;
  /**
   * Takes no more runs, aborts the running ones with `stop` (each goes back to the queue unless it
   * finishes first) and closes; resolves as {@link ended} does.
   */
  stop(): Promise<WorkerEnd>;
}

/**
 * Starts a worker on the queue at `url` (after checking that Redis answers). When a run queued
 * from another code version comes, the worker puts it back, takes no more, lets its other runs
 * finish and ends with `refused`.
 * @throws RedisUnreachableError when Redis does not answer.
 */
export async function startWorker<P = unknown, R = unknown>(
  o: StartWorkerOptions<P, R>,
): Promise<SweepWorker> {
  const log = o.log ?? (() => {});
  await checkRedis(o.url);
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const active = new Map<string, AbortController>();
  let closing: Promise<WorkerEnd> | undefined;
  let settle: (end: WorkerEnd) => void = () => {};
  const ended = new Promise<WorkerEnd>((resolve) => {
    settle = resolve;
  });
  let refusal: string | undefined;
  let worker: Worker | undefined;

  const close = (interrupt: boolean): Promise<WorkerEnd> => {
    closing ??= (async () => {
      await worker!.pause(true);
      if (interrupt) for (const c of active.values()) c.abort('stop' satisfies AbortReason);
      await worker!.close();
      const end: WorkerEnd = refusal ? { reason: 'refused', refusal } : { reason: 'stopped' };
      settle(end);
      return end;
    })();
    return closing;
  };

  const processor = async (job: Job, token?: string): Promise<R> => {
    const back = async (): Promise<never> => {
      await job.moveToWait(token);
      throw new WaitingError();
    };
    if (closing) return back();
    if (!isSweepJobData(job.data))
      throw new UnrecoverableError(
        `job ${job.id} is not a run of a sweep (it needs sweep, name, version and payload)`,
      );
    const { sweep, name: run, version, payload } = job.data;
    const why = versionDifference(version, o.version);
    if (why) {
      refusal ??= `refused ${sweep}/${run}: ${why}; it stays on the queue for a worker of its version`;
      log(refusal);
      void close(false);
      return back();
    }
    const controller = new AbortController();
    active.set(job.id!, controller);
    log(`started ${sweep}/${run} (attempt ${job.attemptsStarted})`);
    try {
      const result = await o.run(
        { sweep, name: run, payload: payload as P, attempt: job.attemptsStarted },
        controller.signal,
      );
      log(`finished ${sweep}/${run}`);
      return result;
    } catch (err) {
      const reason = controller.signal.reason as AbortReason | undefined;
      if (reason === 'stop') {
        log(`returned ${sweep}/${run} to the queue`);
        return back();
      }
      if (reason === 'lost') throw err;
      const message = err instanceof Error ? err.message : String(err);
      log(`failed ${sweep}/${run}: ${message}`);
      throw new UnrecoverableError(message);
    } finally {
      active.delete(job.id!);
    }
  };

  worker = new Worker(o.queue ?? DEFAULT_QUEUE, processor, {
    connection: connectionOf(o.url),
    concurrency: o.concurrency ?? 1,
    name,
    lockDuration: o.lockMs ?? 30_000,
    stalledInterval: o.stalledCheckMs ?? 15_000,
    maxStalledCount: o.maxStalls ?? 2,
  });
  let lastError = '';
  worker.on('error', (err: Error) => {
    if (err.message !== lastError) log(`queue ${o.url.display}: ${err.message}`);
    lastError = err.message;
  });
  worker.on('lockRenewalFailed', (ids: string[]) => {
    for (const id of ids) {
      const c = active.get(id);
      if (!c || c.signal.aborted) continue;
      log(`lost the lock of job ${id} (another worker may take it over): its run here stops now`);
      c.abort('lost' satisfies AbortReason);
    }
  });
  return { name, ended, stop: () => close(true) };
}
