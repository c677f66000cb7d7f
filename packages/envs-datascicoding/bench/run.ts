/**
 * Evaluations per second with 1, 2 and 4 concurrent sandboxed workers.
 *
 *   npm run bench -- [--evals 8] [--reps 3] [--isolation auto|namespaces|basic] [--dataset iris]
 *                    [--program logistic|forest]
 *
 * Each repetition scores `evals` programs (five splits each) through a pool of the given size;
 * the figure is the median over repetitions, and the ratio compares it with one worker measured
 * in the same run. With namespace isolation every setting is measured twice, with runs forked
 * from the fork server and with a new interpreter per run, and the speed-up of the fork server
 * is printed next to it (same run, same load).
 */
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
const PROGRAM = PROGRAMS[programName];
if (PROGRAM === undefined) {
  throw new Error(
    `--program: expected one of ${Object.keys(PROGRAMS).join(', ')}, got ${programName}`,
  );
}

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
    Array.from({ length: evals }, () =>
      evaluateProgram(dataset, PROGRAM as string, { isolation, pool, forkServer }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const failed = results.find((r) => !r.ok);
  if (failed) throw new Error(`an evaluation failed: ${failed.reason}: ${failed.error}`);
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
// Warm-up: file caches, the isolation probe, and the fork servers of up to 4 workers.
await round(1, false);
if (mode === 'namespaces') await round(4, true);
const oneWorker: number[] = [];
for (const workers of [1, 2, 4]) {
  const samples: number[][] = launches.map(() => []);
  // The launches alternate repetition by repetition, so that both see the same load.
  for (let r = 0; r < reps; r++) {
    for (const [k, forkServer] of launches.entries()) {
      samples[k]?.push(await round(workers, forkServer));
    }
  }
  const rates = samples.map(median);
  if (workers === 1) oneWorker.push(...rates);
  const parts = launches.map((forkServer, k) => {
    const rate = rates[k] as number;
    return `${launchName(forkServer)}: ${rate.toFixed(2)} evaluations/s (${(1000 / rate).toFixed(0)} ms each, ${(rate / (oneWorker[k] as number)).toFixed(2)}x vs 1 worker)`;
  });
  if (launches.length === 2) {
    parts.push(`fork server speed-up ${((rates[1] as number) / (rates[0] as number)).toFixed(2)}x`);
  }
  console.log(`workers=${workers}  ${parts.join('  |  ')}`);
}
