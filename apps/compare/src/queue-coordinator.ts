// `npm run compare -- … --queue redis://HOST:PORT[/DB]`: the comparison's runs go on a Redis
// queue as jobs (each with its resolved run configuration and the code version), workers on any
// machine train them (`npm run compare -- worker`), and each finished run comes back into the
// comparison folder as `npm run archive` keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { writeJsonAtomicSync } from '@poad/run-kit';
import { openSweep, type QueueUrl, type SweepProgress } from '@poad/sweep-queue';
import { flatRunConfig, type RunConfig } from '@poad/trainer';
import { localCodeVersion } from './code-version.js';
import { type RunFiles, unpackRun } from './run-transfer.js';

/** What a job carries besides its name: the environment and the run's resolved configuration. */
export interface RunPayload {
  env: string;
  config: Record<string, unknown>;
}

/** What a worker sends back: the run's archive, and who trained it. */
export interface RunResult {
  files: RunFiles;
}

/** A run of the comparison to put on the queue. */
export interface QueuedRun {
  name: string;
  label: string;
  payload: RunPayload;
}

/** A run that failed on the queue, with the worker's reason. */
export interface FailedRun {
  name: string;
  label: string;
  reason: string;
}

/** Run options a worker decides for itself: where the run goes and how it is shown. */
const WORKER_DECIDES = ['runs', 'runName', 'resume', 'quiet'];

/**
 * The configuration a job carries for run `rc`: config.json's fields but those of where it is
 * written, and without `threads` unless the comparison fixed it (`--extra="--threads N"`): a
 * worker gives its runs its own share of its machine's cores otherwise.
 */
export function queuedConfig(rc: RunConfig, threadsFixed: boolean): Record<string, unknown> {
  const flat = flatRunConfig(rc);
  for (const key of WORKER_DECIDES) delete flat[key];
  if (!threadsFixed) delete flat.threads;
  return flat;
}

/**
 * The sweep id of comparison folder `dir`: the one its compare.json records, or (its first time
 * on a queue) its folder name and this host's, recorded there.
 */
export function sweepIdOf(dir: string): string {
  const file = join(dir, 'compare.json');
  const saved = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  if (typeof saved.sweep === 'string') return saved.sweep;
  const id = `${basename(dir)}-${hostname()}`.replace(/[^A-Za-z0-9._@+-]+/g, '-');
  writeJsonAtomicSync(file, { ...saved, sweep: id });
  return id;
}

/** `3m 20s`, `1h 05m`, `45s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

const progressLine = (p: SweepProgress) =>
  `queue: ${p.queued} queued, ${p.running} running, ${p.done} done, ${p.failed} failed of ${p.total}${
    p.etaSeconds === null ? '' : `; ETA ${duration(p.etaSeconds)}`
  }`;

/**
 * Puts `runs` on the queue at `url` as sweep `sweep` (attaching to those already there), then
 * waits for them: each finished run is written into `dir` as its archive, each failure is kept
 * with its reason. Ctrl-C (or SIGTERM) stops the wait and leaves the queue as it is.
 */
export async function runOnQueue(o: {
  url: QueueUrl;
  sweep: string;
  dir: string;
  runs: readonly QueuedRun[];
  /** Runs of the comparison finished before (for the progress counts). */
  done: number;
  log: (line: string) => void;
}): Promise<{ interrupted: boolean; failed: FailedRun[] }> {
  const labels = new Map(o.runs.map((r) => [r.name, r.label]));
  const named = (name: string) => `${labels.get(name) ?? name} (${name})`;
  const sweep = await openSweep<RunPayload, RunResult>({
    url: o.url,
    id: o.sweep,
    version: localCodeVersion(),
    log: o.log,
  });
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    o.log(
      `\n${signal}: stopped waiting; the runs stay on the queue and the workers go on; reattach with: npm run compare -- --resume ${o.dir}`,
    );
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { queued, found } = await sweep.submit(
      o.runs.map((r) => ({ name: r.name, payload: r.payload })),
    );
    o.log(
      `sweep ${o.sweep} on ${o.url.display}: ${runs(queued.length)} queued${found.length ? `, ${runs(found.length)} found on the queue` : ''}; start workers with: npm run compare -- worker --queue ${o.url.display}`,
    );
    const outcome = await sweep.gather(
      {
        done: (name, result, info) => {
          unpackRun(result?.files, join(o.dir, name), name);
          const where = info.worker ? ` on ${info.worker}` : '';
          const took = info.seconds === undefined ? '' : ` in ${duration(info.seconds)}`;
          o.log(`finished ${named(name)}${where}${took}`);
        },
        failed: (name, reason) => {
          o.log(`failed ${named(name)}: ${reason}`);
        },
        progress: (p) => o.log(progressLine(p)),
      },
      { signal: stop.signal, done: o.done },
    );
    return {
      interrupted: outcome.interrupted,
      failed: outcome.failed.map((f) => ({ ...f, label: labels.get(f.name) ?? f.name })),
    };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await sweep.close();
  }
}
