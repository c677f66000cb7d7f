// The coordinator's side of a sweep: put its runs on the queue (or find them there again), then
// wait for them, handing each finished run's result or failure to the caller as it comes.
import { type Job, Queue } from 'bullmq';
import type { CodeVersion } from './code-version.js';
import { checkRedis, connectionOf } from './connection.js';
import { DEFAULT_QUEUE, jobIdOf, type SweepJobData } from './job.js';
import type { QueueUrl } from './queue-url.js';

/** One run to queue. */
export interface SweepRun<P> {
  readonly name: string;
  readonly payload: P;
}

/** How far a sweep is: its runs by state, and the estimated time left. */
export interface SweepProgress {
  readonly queued: number;
  readonly running: number;
  readonly done: number;
  readonly failed: number;
  readonly total: number;
  /** Seconds left at the pace of the runs finished so far; null before the first one. */
  readonly etaSeconds: number | null;
}

/** Who trained a run and for how long (from the queue's records). */
export interface RunInfo {
  /** The worker's name (`host:pid` for those of this package). */
  readonly worker?: string;
  /** From the start of its last attempt to its end. */
  readonly seconds?: number;
  /** How many times a worker took it. */
  readonly attempts: number;
}

/** What {@link Sweep.gather} does with each run as it ends. */
export interface GatherHandlers<R> {
  /** A run finished: keep its result. The job leaves the queue once this resolves. */
  done(name: string, result: R, info: RunInfo): void | Promise<void>;
  /** A run failed: `reason` is the worker's. The job leaves the queue once this resolves. */
  failed(name: string, reason: string, info: RunInfo): void | Promise<void>;
  /** The counts changed. */
  progress?(p: SweepProgress): void;
}

/** How a wait ended. */
export interface GatherOutcome {
  /** Stopped by the signal: the runs not gathered stay on the queue. */
  readonly interrupted: boolean;
  readonly failed: readonly { name: string; reason: string }[];
}

/** What state a job is in, as the progress counts it. */
function bucketOf(state: string): 'queued' | 'running' | 'completed' | 'failed' {
  if (state === 'active') return 'running';
  if (state === 'completed' || state === 'failed') return state;
  return 'queued'; // waiting, delayed, prioritized, waiting-children, unknown (being moved)
}

const infoOf = (job: Job): RunInfo => ({
  ...(job.processedBy ? { worker: job.processedBy } : {}),
  ...(job.processedOn && job.finishedOn
    ? { seconds: (job.finishedOn - job.processedOn) / 1000 }
    : {}),
  attempts: job.attemptsStarted,
});

/** A sweep's runs on a queue, seen from the coordinator. */
export class Sweep<P = unknown, R = unknown> {
  private readonly runs = new Map<string, P>();

  constructor(
    private readonly queue: Queue,
    readonly id: string,
    readonly version: CodeVersion,
  ) {}

  /**
   * Puts `runs` on the queue. A run whose job is already there (queued, running, or finished and
   * not gathered yet) is left as it is, so a coordinator that stopped can attach again; a failed
   * one is queued again.
   * @returns the names queued now and those found on the queue.
   */
  async submit(runs: readonly SweepRun<P>[]): Promise<{ queued: string[]; found: string[] }> {
    const queued: string[] = [];
    const found: string[] = [];
    for (const run of runs) {
      this.runs.set(run.name, run.payload);
      const id = jobIdOf(this.id, run.name);
      const job = await this.queue.getJob(id);
      if (job && (await job.getState()) !== 'failed') {
        found.push(run.name);
        continue;
      }
      if (job) await job.remove();
      await this.add(run.name, run.payload);
      queued.push(run.name);
    }
    return { queued, found };
  }

  private async add(name: string, payload: P): Promise<void> {
    const data: SweepJobData<P> = { sweep: this.id, name, version: this.version, payload };
    await this.queue.add(name, data, {
      jobId: jobIdOf(this.id, name),
      attempts: 1,
      removeOnComplete: false,
      removeOnFail: false,
    });
  }

  /**
   * Waits for every submitted run, polling the queue every `pollMs`: each finished one goes to
   * `handlers.done` and each failed one to `handlers.failed`, and then leaves the queue. A run
   * whose job has vanished (removed by hand) is queued again. `signal` stops the wait and leaves
   * the rest on the queue. `done` counts runs finished before (e.g. kept from an earlier
   * coordinator) in the progress.
   */
  async gather(
    handlers: GatherHandlers<R>,
    o: { signal?: AbortSignal; pollMs?: number; done?: number } = {},
  ): Promise<GatherOutcome> {
    const pending = new Set(this.runs.keys());
    const failed: { name: string; reason: string }[] = [];
    const durations: number[] = [];
    let done = o.done ?? 0;
    const total = pending.size + done;
    let last = '';
    while (pending.size > 0 && !o.signal?.aborted) {
      const counts = { queued: 0, running: 0 };
      // The state first, the job after: a job read before it completes has no result yet.
      const states = await Promise.all(
        [...pending].map(async (name) => ({
          name,
          state: await this.queue.getJobState(jobIdOf(this.id, name)),
        })),
      );
      for (const { name, state } of states) {
        const bucket = bucketOf(state);
        const job =
          bucket === 'completed' || bucket === 'failed'
            ? await this.queue.getJob(jobIdOf(this.id, name))
            : undefined;
        if (state === 'unknown' || ((bucket === 'completed' || bucket === 'failed') && !job)) {
          await this.add(name, this.runs.get(name) as P);
          counts.queued++;
          continue;
        }
        if (job && bucket === 'completed') {
          const info = infoOf(job);
          await handlers.done(name, job.returnvalue as R, info);
          await job.remove();
          pending.delete(name);
          done++;
          if (info.seconds !== undefined) durations.push(info.seconds);
        } else if (job && bucket === 'failed') {
          const reason = job.failedReason || 'failed without a reason';
          await handlers.failed(name, reason, infoOf(job));
          await job.remove();
          pending.delete(name);
          failed.push({ name, reason });
        } else if (bucket === 'queued' || bucket === 'running') counts[bucket]++;
      }
      const mean = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 0;
      const left = counts.queued + counts.running;
      const progress: SweepProgress = {
        ...counts,
        done,
        failed: failed.length,
        total,
        etaSeconds: durations.length ? (mean * left) / Math.max(1, counts.running) : null,
      };
      const key = `${progress.queued}/${progress.running}/${progress.done}/${progress.failed}`;
      if (key !== last) handlers.progress?.(progress);
      last = key;
      if (pending.size > 0) await sleep(o.pollMs ?? 1000, o.signal);
    }
    return { interrupted: pending.size > 0, failed };
  }

  /** Closes the connection; the queue keeps whatever is on it. */
  async close(): Promise<void> {
    await this.queue.close();
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Opens sweep `id` on the queue at `url` (after checking that Redis answers), as code `version`:
 * the runs it submits carry that version, and workers of another refuse them.
 * @throws RedisUnreachableError when Redis does not answer; nothing is queued then.
 */
export async function openSweep<P = unknown, R = unknown>(o: {
  url: QueueUrl;
  id: string;
  version: CodeVersion;
  queue?: string;
  /** Told of connection errors (each message once in a row); the sweep reconnects by itself. */
  log?: (line: string) => void;
}): Promise<Sweep<P, R>> {
  jobIdOf(o.id, 'check');
  await checkRedis(o.url);
  const queue = new Queue(o.queue ?? DEFAULT_QUEUE, { connection: connectionOf(o.url) });
  let last = '';
  queue.on('error', (err: Error) => {
    if (err.message !== last) o.log?.(`queue ${o.url.display}: ${err.message} (retrying)`);
    last = err.message;
  });
  return new Sweep<P, R>(queue, o.id, o.version);
}
