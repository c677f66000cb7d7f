// Programs scored where the reward never looks: the programs training runs sampled
// (programs.jsonl) and the untrained policy's (npm run prior --out FILE), each distinct program
// fitted on all the reward rows of a dataset with held-out rows and scored by ROC AUC on the
// held-out rows (evaluateHeldOut). Per run and for the prior: the share that ran there, the mean
// held-out AUC of those that ran, and the best-of-k curve, the expected largest held-out AUC
// among k programs drawn without replacement (a failure counting as --failure-value), exactly
// from the order statistics.
//
//   npm run heldout -w @poad/train-datascicoding -- --dataset kiln_batches
//     [--dataset csv --csv FILE --target COLUMN --holdout F [--holdout-seed S] [--max-rows N]]
//     [--runs DIR[,DIR...]] [--prior prior.json] [--last-iterations 5 | --last PROGRAMS]
//     [--k-max 256] [--failure-value 0] [--timeout S] [--time-limit wall|cpu]
//     [--scoring seeded-v1] [--score-cache DIR|off] [--out report.json]
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { formatHelp, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import {
  type Dataset,
  type DatasetSpec,
  datasetName,
  type Evaluation,
  evaluateHeldOut,
  LEGACY_SCORING,
  loadDataset,
  type SandboxLimits,
  type ScoreCache,
  type ScoringRule,
  type TimeLimit,
} from '@poad/envs-datascicoding';
import { ProgressBar, parseArgsWithConfig, writeJsonAtomicSync } from '@poad/run-kit';
import {
  commandDatasetSpec,
  type PriorDatasetRecord,
  priorDatasetMismatch,
  priorKeyOf,
  readRunConfig,
  runDatasetMismatch,
  SCORE_CACHE_OPTION,
  scoreCacheOf,
} from './command-options.js';
import { readPrograms } from './programs.js';
import {
  dataSciApp,
  datasetOf,
  runScript,
  SCORING_OPTION,
  sandboxLimits,
  scoringOf,
  TIME_LIMIT_OPTION,
  TIMEOUT_OPTION,
  userPath,
} from './spec.js';

export { priorKeyOf, runDatasetMismatch } from './command-options.js';

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
  /**
   * How the source's own rewards (`meanRewardAuc`) were scored: its config.json's or prior
   * file's `scoring`; `os-seeded` for one recorded before the field existed.
   */
  rewardScoring?: ScoringRule;
}

/** Summarises one source's programs from their held-out scores (keyed by program text). */
export function summariseHeldOut(
  source: string,
  path: string,
  programs: readonly SourceProgram[],
  scores: ReadonlyMap<string, HeldOutScore>,
  o: { failureValue: number; kMax: number },
  rewardScoring?: ScoringRule,
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
    ...(rewardScoring ? { rewardScoring } : {}),
  };
}

/** The k values the table shows. */
const TABLE_KS = [1, 4, 16, 64, 256];

/** The summaries as a Markdown table. */
export function heldOutTable(rows: readonly HeldOutSummary[]): string {
  const f = (x: number | null | undefined, d = 4) =>
    x === null || x === undefined ? '–' : x.toFixed(d);
  return [
    `| source | programs | distinct | ran (held out) | mean held-out AUC (ran) | mean reward AUC (same programs) | best held-out AUC | ${TABLE_KS.map((k) => `best of ${k}`).join(' | ')} | rewards scored |`,
    `|---|---|---|---|---|---|---|${TABLE_KS.map(() => '---').join('|')}|---|`,
    ...rows.map(
      (r) =>
        `| ${r.source} | ${r.programs} | ${r.distinct} | ${(100 * r.ran).toFixed(0)}% | ${f(r.meanAuc)} | ${f(r.meanRewardAuc)} | ${f(r.bestAuc)} | ${TABLE_KS.map((k) => f(r.bestOfK[k - 1])).join(' | ')} | ${r.rewardScoring ?? '–'} |`,
    ),
  ].join('\n');
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
    description:
      'prior.json of npm run prior (its programs for this dataset; gzipped prior.json.gz as results/ keeps them is read too)',
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
  timeLimit: TIME_LIMIT_OPTION,
  scoring: SCORING_OPTION,
  scoreCache: SCORE_CACHE_OPTION,
  out: {
    type: 'string',
    optional: true,
    placeholder: 'file',
    description: 'JSON report: options, summaries, curves, every distinct program',
  },
} satisfies OptionsSchema;

/** How {@link scoreDistinct} scores. */
export interface HeldOutScoring {
  limits?: Partial<SandboxLimits>;
  scoring?: ScoringRule;
  timeLimit?: TimeLimit;
  cache?: ScoreCache;
}

/** Scores every distinct program once (by text), with a progress bar on stderr. */
export async function scoreDistinct(
  data: Dataset,
  bodies: readonly string[],
  how: HeldOutScoring = {},
): Promise<Map<string, HeldOutScore>> {
  const distinct = [...new Set(bodies)];
  const bar = new ProgressBar({ total: distinct.length, unit: 'programs', label: 'held out' });
  let done = 0;
  const scores = new Map<string, HeldOutScore>();
  const options = {
    ...(how.limits ? { limits: how.limits } : {}),
    ...(how.scoring ? { scoring: how.scoring } : {}),
    ...(how.timeLimit ? { timeLimit: how.timeLimit } : {}),
    ...(how.cache ? { cache: how.cache } : {}),
  };
  await Promise.all(
    distinct.map((body) =>
      evaluateHeldOut(data, body, options).then((e: Evaluation) => {
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
  const spec: DatasetSpec = commandDatasetSpec(o.dataset, o);
  if (typeof spec !== 'object' || !spec.holdout) {
    throw new OptionError(
      `--dataset ${o.dataset} holds no rows out; use one that does (kiln_batches, ferry_crossings) or --dataset csv with --holdout FRACTION`,
    );
  }
  if (o.runs.length === 0 && !o.prior)
    throw new OptionError('give --runs DIR[,DIR...] or --prior FILE');
  const cache = scoreCacheOf(o.scoreCache, o.scoring);
  const selection: Selection = { last: o.last, lastIterations: o.lastIterations };
  const sources: {
    source: string;
    path: string;
    programs: SourceProgram[];
    rewardScoring: ScoringRule;
  }[] = [];
  for (const given of o.runs) {
    const dir = userPath(given);
    const config = readRunConfig(dir, '--runs');
    const mismatch = runDatasetMismatch(config, o.dataset, spec);
    if (mismatch) throw new OptionError(`--runs ${given}: ${mismatch}`);
    const rows = readPrograms(dir);
    if (rows.length === 0) throw new OptionError(`--runs ${given}: no programs.jsonl there`);
    sources.push({
      source: basename(resolve(dir)),
      path: given,
      programs: selectRunPrograms(rows, selection),
      rewardScoring: scoringOf(config),
    });
  }
  let priorFile:
    | {
        scoring?: string;
        datasets?: Record<string, PriorDatasetRecord>;
        programs?: Record<string, { body: string; ok: boolean; auc: number | null }[]>;
      }
    | undefined;
  const key = priorKeyOf(o.dataset, spec);
  if (o.prior) {
    if (!existsSync(userPath(o.prior))) throw new OptionError(`--prior ${o.prior}: no such file`);
    // results/ keeps large prior files gzipped (F.json.gz): read them as they are.
    const raw = readFileSync(userPath(o.prior));
    const text = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
    priorFile = JSON.parse(text.toString('utf8')) as typeof priorFile;
    const programs = priorFile?.programs?.[key];
    if (!programs?.length) {
      throw new OptionError(
        `--prior ${o.prior} has no programs for ${key}; make them with: npm run prior -w @poad/train-datascicoding -- ${o.dataset === 'csv' ? `--csv ${o.csv} --target ${o.target} --holdout ${o.holdout}${o.holdoutSeed === undefined ? '' : ` --holdout-seed ${o.holdoutSeed}`}${o.maxRows === undefined ? '' : ` --max-rows ${o.maxRows}`}` : `--datasets ${o.dataset}`} --samples 256 --out ${o.prior}`,
      );
    }
    const chosen = o.last === undefined ? programs : programs.slice(0, o.last);
    sources.push({
      source: 'prior',
      path: o.prior,
      programs: chosen.map((p) => ({ body: p.body, rewardAuc: p.ok ? p.auc : null })),
      rewardScoring:
        priorFile?.scoring === 'seeded-v1' || priorFile?.scoring === 'os-seeded'
          ? priorFile.scoring
          : LEGACY_SCORING,
    });
  }
  let data: Dataset;
  try {
    data = await loadDataset(spec);
  } catch (err) {
    const why = (err as Error).name;
    if (why === 'DatasetError' || why === 'DataSciOptionError') {
      throw new OptionError((err as Error).message);
    }
    throw err;
  }
  if (o.prior) {
    const mismatch = priorDatasetMismatch(priorFile?.datasets?.[key], o.dataset, spec, data);
    if (mismatch) throw new OptionError(`--prior ${o.prior}: its programs of ${key}: ${mismatch}`);
  }
  const held = data.holdout!;
  process.stderr.write(
    `${datasetName(spec)}: ${data.n} reward rows, ${held.n} held out (fraction ${held.fraction}, seed ${held.seed})\n`,
  );
  for (const s of sources) {
    if (s.rewardScoring === LEGACY_SCORING) {
      process.stderr.write(
        `${s.source}: its rewards were scored ${LEGACY_SCORING} (recorded before seeded scoring), so its reward AUCs are one draw among many for programs without their own random_state\n`,
      );
    }
  }
  const scores = await scoreDistinct(
    data,
    sources.flatMap((s) => s.programs.map((p) => p.body)),
    {
      limits: sandboxLimits(o.timeout, o.timeLimit),
      scoring: o.scoring,
      timeLimit: o.timeLimit,
      ...(cache ? { cache } : {}),
    },
  );
  const summaries = sources.map((s) =>
    summariseHeldOut(s.source, s.path, s.programs, scores, o, s.rewardScoring),
  );
  process.stdout.write(`${heldOutTable(summaries)}\n`);
  if (o.out) {
    const report = {
      dataset: o.dataset,
      heldOut: { rows: held.n, rewardRows: data.n, fraction: held.fraction, seed: held.seed },
      // How the held-out scores here were made (the sources' own rewards: each summary's
      // rewardScoring).
      scoring: o.scoring,
      timeLimit: o.timeLimit,
      options: {
        last: o.last ?? null,
        lastIterations: o.last === undefined ? o.lastIterations : null,
        kMax: o.kMax,
        failureValue: o.failureValue,
      },
      summaries,
      programs: [...scores].map(([body, s]) => ({ body, ...s })),
    };
    writeJsonAtomicSync(userPath(o.out), report);
  }
}

runScript(import.meta.url, main);
