/**
 * Evaluations per second with 1, 2 and 4 concurrent sandboxed workers.
 *
 *   npm run bench -- [--evals 8] [--reps 3] [--isolation auto|namespaces|basic] [--dataset iris]
 *                    [--program logistic|forest|FILE] [--workers 1,2,4]
 *
 * `--program FILE` takes the programs a training run wrote (its programs.jsonl), the first
 * `evals` of them, so the figure is for a real mix of programs (give the run's dataset).
 * Each repetition scores `evals` programs (five splits each) through a pool of the given size;
 * the figure is the median over repetitions, and the ratio compares it with one worker measured
 * in the same run. With namespace isolation every setting is measured twice, with runs forked
 * from the fork server and with a new interpreter per run, and the speed-up of the fork server
 * is printed next to it (same run, same load).
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import {
  type BuiltinDatasetName,
  chooseIsolation,
  DEFAULT_PYTHON,
  EvaluationPool,
  evaluateProgram,
  type IsolationRequest,
  loadDataset,
} from '../src/index.js';

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined
    ? (process.argv[at + 1] as string)
    : fallback;
}

const evals = Number(argument('evals', '8'));
const reps = Number(argument('reps', '3'));
const isolation = argument('isolation', 'auto') as IsolationRequest;
const datasetName = argument('dataset', 'iris') as BuiltinDatasetName;
const PROGRAMS: Record<string, string> = {
  logistic: [
    'from sklearn.linear_model import LogisticRegression',
    '    model = LogisticRegression(max_iter=1000).fit(x_train, y_train)',
  ].join('\n'),
  forest: [
    'from sklearn.ensemble import RandomForestClassifier',
    '    model = RandomForestClassifier(n_estimators=100, random_state=0).fit(x_train, y_train)',
  ].join('\n'),
};
const programName = argument('program', 'logistic');
const workerCounts = argument('workers', '1,2,4').split(',').map(Number);
if (workerCounts.some((w) => !Number.isInteger(w) || w < 1)) {
  throw new Error('--workers: expected a comma-separated list of positive integers, e.g. 1,2,4');
}

/** The programs one repetition scores. */
function programsToRun(): string[] {
  const fixed = PROGRAMS[programName];
  if (fixed !== undefined) return Array.from({ length: evals }, () => fixed);
  if (!existsSync(programName)) {
    throw new Error(
      `--program: expected ${Object.keys(PROGRAMS).join(', ')} or a run's programs.jsonl, got ${programName}`,
    );
  }
  const bodies = readFileSync(programName, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { body: string }).body);
  if (bodies.length < evals) {
    throw new Error(
      `--program ${programName} holds ${bodies.length} programs; --evals is ${evals}`,
    );
  }
  return bodies.slice(0, evals);
}
const PROGRAM_LIST = programsToRun();

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function round(workers: number, forkServer: boolean): Promise<number> {
  const pool = new EvaluationPool(workers);
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: evals }, (_, i) =>
      evaluateProgram(dataset, PROGRAM_LIST[i] as string, { isolation, pool, forkServer }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  // A fixed program must run; a run's own programs fail as often as they did in training.
  const failed = results.find((r) => !r.ok);
  if (failed && PROGRAMS[programName] !== undefined) {
    throw new Error(`an evaluation failed: ${failed.reason}: ${failed.error}`);
  }
  return evals / seconds;
}

const dataset = await loadDataset(datasetName);
const mode = await chooseIsolation(isolation, DEFAULT_PYTHON);
console.log(
  `DataSciCoding sandbox throughput: ${datasetName} (${dataset.n}x${dataset.d}), ${programName}, ` +
    `${mode} isolation, ${evals} evaluations x ${reps} repetitions, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
const launches = mode === 'namespaces' ? [false, true] : [false];
const launchName = (forkServer: boolean) =>
  mode === 'namespaces' ? (forkServer ? 'fork server' : 'new interpreter') : mode;
// Warm-up: file caches, the isolation probe, and a fork server per worker.
await round(1, false);
if (mode === 'namespaces') await round(Math.max(...workerCounts), true);
const first = workerCounts[0] as number;
const firstRates: number[] = [];
for (const workers of workerCounts) {
  const samples: number[][] = launches.map(() => []);
  // The launches alternate repetition by repetition, so that both see the same load.
  for (let r = 0; r < reps; r++) {
    for (const [k, forkServer] of launches.entries()) {
      samples[k]?.push(await round(workers, forkServer));
    }
  }
  const rates = samples.map(median);
  if (workers === first) firstRates.push(...rates);
  const parts = launches.map((forkServer, k) => {
    const rate = rates[k] as number;
    return `${launchName(forkServer)}: ${rate.toFixed(2)} evaluations/s (${(1000 / rate).toFixed(0)} ms each, ${(rate / (firstRates[k] as number)).toFixed(2)}x vs ${first} worker${first === 1 ? '' : 's'})`;
  });
  if (launches.length === 2) {
    parts.push(`fork server speed-up ${((rates[1] as number) / (rates[0] as number)).toFixed(2)}x`);
  }
  console.log(`workers=${workers}  ${parts.join('  |  ')}`);
}
