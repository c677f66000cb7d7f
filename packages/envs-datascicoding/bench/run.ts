/**
 * Evaluations per second with 1, 2 and 4 concurrent sandboxed workers.
 *
 *   npm run bench -- [--evals 8] [--reps 3] [--isolation auto|namespaces|basic] [--dataset iris]
 *
 * Each repetition scores `evals` programs (logistic regression, five splits each) through a pool
 * of the given size; the figure is the median over repetitions, and the ratio compares it with
 * one worker measured in the same run.
 */
import { availableParallelism, cpus } from 'node:os';
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
const PROGRAM = [
  'from sklearn.linear_model import LogisticRegression',
  '    model = LogisticRegression(max_iter=1000).fit(x_train, y_train)',
].join('\n');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function round(workers: number): Promise<number> {
  const pool = new EvaluationPool(workers);
  const started = performance.now();
  const results = await Promise.all(
    Array.from({ length: evals }, () => evaluateProgram(dataset, PROGRAM, { isolation, pool })),
  );
  const seconds = (performance.now() - started) / 1000;
  const failed = results.find((r) => !r.ok);
  if (failed) throw new Error(`an evaluation failed: ${failed.reason}: ${failed.error}`);
  return evals / seconds;
}

const dataset = await loadDataset(datasetName);
const mode = await chooseIsolation(isolation, DEFAULT_PYTHON);
console.log(
  `DataSciCoding sandbox throughput: ${datasetName} (${dataset.n}x${dataset.d}), logistic regression, ` +
    `${mode} isolation, ${evals} evaluations x ${reps} repetitions, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'})`,
);
await round(1); // warm-up: file caches, isolation probe
let baseline = Number.NaN;
for (const workers of [1, 2, 4]) {
  const rates: number[] = [];
  for (let r = 0; r < reps; r++) rates.push(await round(workers));
  const rate = median(rates);
  if (workers === 1) baseline = rate;
  console.log(
    `workers=${workers}  median ${rate.toFixed(2)} evaluations/s  (${(1000 / rate).toFixed(0)} ms each)  ratio vs 1 worker: ${(rate / baseline).toFixed(2)}x`,
  );
}
