// Programs scored where the reward never looks: the programs training runs sampled
// (programs.jsonl) and the untrained policy's (npm run prior --out FILE), each distinct program
// fitted on all the reward rows of a dataset with held-out rows and scored by ROC AUC on the
// held-out rows (evaluateHeldOut). Per run and for the prior: the share that ran there, the mean
// held-out AUC of those that ran, and the best-of-k curve, the expected largest held-out AUC
// among k programs drawn without replacement (a failure counting as --failure-value), exactly
// from the order statistics.
//
//   npm run heldout -w @poad/train-datascicoding -- --dataset kiln_batches
//     [--runs DIR[,DIR...]] [--prior prior.json] [--last-iterations 5 | --last PROGRAMS]
//     [--k-max 256] [--failure-value 0] [--timeout S] [--out report.json]
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { formatHelp, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import {
  type CsvDatasetSpec,
  type Dataset,
  type DatasetSpec,
  datasetName,
  type Evaluation,
  evaluateHeldOut,
  loadDataset,
  type SandboxLimits,
} from '@poad/envs-datascicoding';
import { ProgressBar, parseArgsWithConfig, writeJsonAtomicSync } from '@poad/run-kit';
import { readPrograms } from './programs.js';
import { dataSciApp, datasetOf, runScript, sandboxLimits, TIMEOUT_OPTION } from './spec.js';

/**
 * The expected largest of k values drawn without replacement from `values` (all draws equally
 * likely): with the values sorted ascending, v(1) ≤ … ≤ v(n), the i-th is the largest of the k
 * with probability C(i − 1, k − 1) / C(n, k). Exact, no sampling. k must be in 1..n.
 */
export function expectedBestOfK(values: readonly number[], k: number): number {
  const n = values.length;
  if (!Number.isInteger(k) || k < 1 || k > n) {
    throw new RangeError(`expectedBestOfK: k must be an integer in 1..${n}, got ${k}`);
  }
  const sorted = [...values].sort((a, b) => a - b);
  // w(i) = C(i − 1, k − 1) / C(n, k); w(n) = k / n and w(i − 1) = w(i) · (i − k) / (i − 1).
  let w = k / n;
  let sum = 0;
  for (let i = n; i >= k; i--) {
    sum += w * (sorted[i - 1] as number);
    w *= (i - k) / (i - 1);
  }
  return sum;
}

/** The best-of-k curve for k = 1 … min(kMax, n). */
export function bestOfKCurve(values: readonly number[], kMax: number): number[] {
  const top = Math.min(kMax, values.length);
  return Array.from({ length: top }, (_, i) => expectedBestOfK(values, i + 1));
}

/** One program as this command reads it: its text and, where known, its reward-split AUC. */
export interface SourceProgram {
  body: string;
  /** Mean ROC AUC over the five reward splits (null: it failed there; undefined: not recorded). */
  rewardAuc?: number | null;
}

/** Which of a run's programs are compared. */
export interface Selection {
  /** The last this many programs (in the order they were sampled). */
  last?: number;
  /** Else the programs of the last this many iterations (0: all). */
  lastIterations: number;
}

/** A run's programs chosen by `selection`, in the order they were sampled. */
export function selectRunPrograms(
  rows: readonly {
    iteration: number;
    envStep: number;
    reward: number;
    ran: boolean;
    body: string;
  }[],
  selection: Selection,
): SourceProgram[] {
  const sorted = [...rows].sort((a, b) => a.iteration - b.iteration || a.envStep - b.envStep);
  let chosen = sorted;
  if (selection.last !== undefined) chosen = sorted.slice(-selection.last);
  else if (selection.lastIterations > 0 && sorted.length > 0) {
    const lastIteration = sorted.at(-1)!.iteration;
    chosen = sorted.filter((r) => r.iteration > lastIteration - selection.lastIterations);
  }
  return chosen.map((r) => ({ body: r.body, rewardAuc: r.ran ? r.reward : null }));
}

/** A held-out score: the AUC, or null and why the program failed there. */
export interface HeldOutScore {
  ok: boolean;
  auc: number | null;
  reason: string | null;
}

/** The figures of one source (a run or the prior). */
export interface HeldOutSummary {
  source: string;
  path: string;
  /** Programs compared (sampled draws, repeats counted). */
  programs: number;
  distinct: number;
  /** Share that ran on the held-out rows. */
  ran: number;
  /** Mean held-out ROC AUC of the programs that ran there (null: none ran). */
  meanAuc: number | null;
  /** Mean held-out value with a failure counted as the failure value. */
  meanValue: number;
  bestAuc: number | null;
  /** Mean reward-split ROC AUC of the same programs that ran there (null: unknown or none). */
  meanRewardAuc: number | null;
  /** bestOfK[k − 1]: the expected largest held-out value among k of these programs. */
  bestOfK: number[];
}

/** Summarises one source's programs from their held-out scores (keyed by program text). */
export function summariseHeldOut(
  source: string,
  path: string,
  programs: readonly SourceProgram[],
  scores: ReadonlyMap<string, HeldOutScore>,
  o: { failureValue: number; kMax: number },
): HeldOutSummary {
  const scored = programs.map((p) => {
    const s = scores.get(p.body);
    if (!s) throw new Error(`no held-out score for a program of ${source}`);
    return { ...p, ...s };
  });
  const ran = scored.filter((p) => p.ok);
  const values = scored.map((p) => (p.ok ? (p.auc as number) : o.failureValue));
  const mean = (xs: readonly number[]) =>
    xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  const rewardAucs = ran.map((p) => p.rewardAuc).filter((a): a is number => typeof a === 'number');
  return {
    source,
    path,
    programs: programs.length,
    distinct: new Set(programs.map((p) => p.body)).size,
    ran: programs.length ? ran.length / programs.length : 0,
    meanAuc: mean(ran.map((p) => p.auc as number)),
    meanValue: mean(values) ?? Number.NaN,
    bestAuc: ran.length ? Math.max(...ran.map((p) => p.auc as number)) : null,
    meanRewardAuc: mean(rewardAucs),
    bestOfK: bestOfKCurve(values, o.kMax),
  };
}

/** The k values the table shows. */
const TABLE_KS = [1, 4, 16, 64, 256];

/** The summaries as a Markdown table. */
export function heldOutTable(rows: readonly HeldOutSummary[]): string {
  const f = (x: number | null | undefined, d = 4) =>
    x === null || x === undefined ? '–' : x.toFixed(d);
  return [
    `| source | programs | distinct | ran (held out) | mean held-out AUC (ran) | mean reward AUC (same programs) | best held-out AUC | ${TABLE_KS.map((k) => `best of ${k}`).join(' | ')} |`,
    `|---|---|---|---|---|---|---|${TABLE_KS.map(() => '---').join('|')}|`,
    ...rows.map(
      (r) =>
        `| ${r.source} | ${r.programs} | ${r.distinct} | ${(100 * r.ran).toFixed(0)}% | ${f(r.meanAuc)} | ${f(r.meanRewardAuc)} | ${f(r.bestAuc)} | ${TABLE_KS.map((k) => f(r.bestOfK[k - 1])).join(' | ')} |`,
    ),
  ].join('\n');
}

/** The name the prior file gives a dataset (npm run prior): the task, or plant_health.csv. */
export function priorKeyOf(task: string, spec: DatasetSpec): string {
  if (task !== 'csv') return task;
  return basename((spec as CsvDatasetSpec).csv);
}

/** Why a run's dataset is not `spec` (null when it is): its config.json's task and CSV options. */
export function runDatasetMismatch(
  config: Record<string, unknown>,
  task: string,
  spec: DatasetSpec,
): string | null {
  if (config.task !== task) return `it trained on --dataset ${String(config.task)}, not ${task}`;
  if (task !== 'csv') return null;
  const own = datasetOf('csv', config) as CsvDatasetSpec;
  const want = spec as CsvDatasetSpec;
  const differs: string[] = [];
  if (basename(own.csv) !== basename(want.csv)) differs.push(`--csv ${own.csv}`);
  if (own.target !== want.target) differs.push(`--target ${own.target}`);
  if (JSON.stringify(own.holdout ?? null) !== JSON.stringify(want.holdout ?? null)) {
    differs.push(
      own.holdout
        ? `--holdout ${own.holdout.fraction} --holdout-seed ${own.holdout.seed}`
        : 'no --holdout (its rewards used every row)',
    );
  }
  if ((own.maxRows ?? null) !== (want.maxRows ?? null)) differs.push(`--max-rows ${own.maxRows}`);
  return differs.length ? `it trained with ${differs.join(', ')}` : null;
}

const schema = {
  dataset: {
    type: 'string',
    default: 'kiln_batches',
    description: `Dataset, as train:datascicoding takes it: one with held-out rows (${dataSciApp.tasks.filter((t) => t !== 'csv' && typeof datasetOf(t) === 'object').join(', ')}, or csv with --holdout)`,
  },
  csv: { type: 'string', optional: true, placeholder: 'file', description: 'CSV of --dataset csv' },
  target: {
    type: 'string',
    optional: true,
    placeholder: 'column',
    description: 'Target column of --csv',
  },
  holdout: {
    type: 'number',
    optional: true,
    min: 0.01,
    max: 0.9,
    description: 'Held-out share of --csv, as the runs trained with it',
  },
  holdoutSeed: { type: 'integer', optional: true, min: 0, description: 'Seed of --holdout' },
  maxRows: { type: 'integer', optional: true, min: 10, description: 'As the runs had it' },
  runs: {
    type: 'list',
    default: [],
    description: 'Run directories (each with programs.jsonl and config.json)',
  },
  prior: {
    type: 'string',
    optional: true,
    placeholder: 'file',
    description: 'prior.json of npm run prior (its programs for this dataset)',
  },
  last: {
    type: 'integer',
    optional: true,
    min: 1,
    description:
      "Compare equal budgets: each run's last N programs and the prior's first N (instead of --last-iterations)",
  },
  lastIterations: {
    type: 'integer',
    default: 5,
    min: 0,
    description: "A run's programs of its last N iterations (0: all); the prior's all",
  },
  kMax: { type: 'integer', default: 256, min: 1, description: 'Largest k of the best-of-k curves' },
  failureValue: {
    type: 'number',
    default: 0,
    description: 'Held-out value of a program that fails there, in means and best-of-k',
  },
  timeout: TIMEOUT_OPTION,
  out: {
    type: 'string',
    optional: true,
    placeholder: 'file',
    description: 'JSON report: options, summaries, curves, every distinct program',
  },
} satisfies OptionsSchema;

/** Scores every distinct program once (cached by text), with a progress bar on stderr. */
export async function scoreDistinct(
  data: Dataset,
  bodies: readonly string[],
  limits: Partial<SandboxLimits> | undefined,
): Promise<Map<string, HeldOutScore>> {
  const distinct = [...new Set(bodies)];
  const bar = new ProgressBar({ total: distinct.length, unit: 'programs', label: 'held out' });
  let done = 0;
  const scores = new Map<string, HeldOutScore>();
  await Promise.all(
    distinct.map((body) =>
      evaluateHeldOut(data, body, limits ? { limits } : {}).then((e: Evaluation) => {
        scores.set(body, {
          ok: e.ok,
          auc: e.ok ? e.auc : null,
          reason: e.ok ? null : (e.reason ?? null),
        });
        bar.update(++done);
      }),
    ),
  );
  bar.finish();
  return scores;
}

async function main(argv: readonly string[]): Promise<void> {
  const parsed = await parseArgsWithConfig(argv, schema);
  if (parsed.help) {
    process.stdout.write(
      formatHelp(schema, {
        usage:
          'npm run heldout -w @poad/train-datascicoding -- --dataset NAME --runs DIR[,DIR...] [--prior prior.json] [options]',
        summary:
          "Scores the programs of training runs and of the prior on the dataset's held-out rows (fitted on every reward row): share that ran, mean held-out ROC AUC, best-of-k curves.",
      }),
    );
    return;
  }
  const o = resolveOptions(schema, parsed.explicit, { sources: parsed.sources });
  if (!dataSciApp.tasks.includes(o.dataset)) {
    throw new OptionError(
      `--dataset: unknown dataset ${o.dataset}; choose from ${dataSciApp.tasks.join(', ')}`,
    );
  }
  let spec: DatasetSpec;
  try {
    spec = datasetOf(o.dataset, o);
  } catch (err) {
    throw new OptionError((err as Error).message);
  }
  if (typeof spec !== 'object' || !spec.holdout) {
    throw new OptionError(
      `--dataset ${o.dataset} holds no rows out; use one that does (kiln_batches, ferry_crossings) or --dataset csv with --holdout FRACTION`,
    );
  }
  if (o.runs.length === 0 && !o.prior)
    throw new OptionError('give --runs DIR[,DIR...] or --prior FILE');
  const selection: Selection = { last: o.last, lastIterations: o.lastIterations };
  const sources: { source: string; path: string; programs: SourceProgram[] }[] = [];
  for (const dir of o.runs) {
    const configFile = resolve(dir, 'config.json');
    if (!existsSync(configFile)) throw new OptionError(`--runs ${dir}: no config.json there`);
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    const mismatch = runDatasetMismatch(config, o.dataset, spec);
    if (mismatch) throw new OptionError(`--runs ${dir}: ${mismatch}`);
    const rows = readPrograms(dir);
    if (rows.length === 0) throw new OptionError(`--runs ${dir}: no programs.jsonl there`);
    sources.push({
      source: basename(resolve(dir)),
      path: dir,
      programs: selectRunPrograms(rows, selection),
    });
  }
  if (o.prior) {
    if (!existsSync(o.prior)) throw new OptionError(`--prior ${o.prior}: no such file`);
    const key = priorKeyOf(o.dataset, spec);
    const file = JSON.parse(readFileSync(o.prior, 'utf8')) as {
      programs?: Record<string, { body: string; ok: boolean; auc: number | null }[]>;
    };
    const programs = file.programs?.[key];
    if (!programs?.length) {
      throw new OptionError(
        `--prior ${o.prior} has no programs for ${key}; make them with: npm run prior -w @poad/train-datascicoding -- --datasets ${o.dataset} --samples 256 --out ${o.prior}`,
      );
    }
    const chosen = o.last === undefined ? programs : programs.slice(0, o.last);
    sources.push({
      source: 'prior',
      path: o.prior,
      programs: chosen.map((p) => ({ body: p.body, rewardAuc: p.ok ? p.auc : null })),
    });
  }
  const data = await loadDataset(spec);
  const held = data.holdout!;
  process.stderr.write(
    `${datasetName(spec)}: ${data.n} reward rows, ${held.n} held out (fraction ${held.fraction}, seed ${held.seed})\n`,
  );
  const scores = await scoreDistinct(
    data,
    sources.flatMap((s) => s.programs.map((p) => p.body)),
    sandboxLimits(o.timeout),
  );
  const summaries = sources.map((s) => summariseHeldOut(s.source, s.path, s.programs, scores, o));
  process.stdout.write(`${heldOutTable(summaries)}\n`);
  if (o.out) {
    const report = {
      dataset: o.dataset,
      heldOut: { rows: held.n, rewardRows: data.n, fraction: held.fraction, seed: held.seed },
      options: {
        last: o.last ?? null,
        lastIterations: o.last === undefined ? o.lastIterations : null,
        kMax: o.kMax,
        failureValue: o.failureValue,
      },
      summaries,
      programs: [...scores].map(([body, s]) => ({ body, ...s })),
    };
    writeJsonAtomicSync(o.out, report);
  }
}

runScript(import.meta.url, main);
