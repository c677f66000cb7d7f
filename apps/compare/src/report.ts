import { basename, join } from 'node:path';
import type { Series } from '@poad/run-kit';
import { attemptsOf, type ProgramRow } from '@poad/train-datascicoding/programs';
import { dataExists, readText } from './archive-file.js';
import type { PriorReference } from './prior.js';
import {
  type Count,
  compareGroups,
  type Difference,
  detectableDifference,
  EXACT_LIMIT,
  fisherExact,
  fisherPower,
  holm,
} from './stats.js';

/**
 * One curve group: an algorithm (or ablation setting) over several seeds. A run folder may be
 * one of an archive (`…/X.zip/poad-s1`): every file of it is read through archive-file.ts.
 */
export interface Group {
  label: string;
  runDirs: string[];
}

export interface GroupSummary {
  label: string;
  seeds: number;
  /** Greedy evaluation of the final policy on the training task: mean ± std over seeds. */
  finalReturn: [number, number];
  finalSuccess: [number, number];
  /** Env steps until the running-mean training return first reaches 90% of the optimum, per seed (null: never). */
  stepsTo90: (number | null)[];
  /** Greedy success per evaluated task, averaged over seeds. */
  generalisation: Record<string, number>;
  /**
   * Credit tasks: each seed's credit accuracy (see {@link RunSummary.creditAccuracy}), mean ± std
   * over the seeds that have one; null for other environments.
   */
  creditAccuracy: [number, number] | null;
  /** The same at the deciding token (see {@link RunSummary.creditAccuracyDeciding}). */
  creditAccuracyDeciding?: [number, number] | null;
  /**
   * Credit tasks, algorithms with a critic: each seed's critic error (see
   * {@link RunSummary.criticError}), mean ± std over the seeds that have one.
   */
  criticError?: CriticErrorSummary<[number, number]> | null;
  runs: RunSummary[];
}

/** A critic's error against the exact values: RMSE, bias (critic − exact) and Spearman's ρ. */
export interface CriticErrorSummary<T> {
  rmse: T;
  bias: T;
  /** Null where ρ was never defined. */
  spearman: T | null;
}

/**
 * `x` with `digits` decimals, a negative number written with the minus sign (U+2212) as in the
 * rest of the report's text, and one that rounds to zero written without a sign.
 */
export function fixed(x: number, digits: number): string {
  const s = x.toFixed(digits);
  if (!s.startsWith('-')) return s;
  return /^-[0.]+$/.test(s) ? s.slice(1) : `−${s.slice(1)}`;
}

/** A difference with its interval, `diff [low, high]`, each to `digits` decimals. */
export function differenceText(
  d: Pick<Difference, 'diff' | 'low' | 'high'>,
  digits: number,
): string {
  return `${fixed(d.diff, digits)} [${fixed(d.low, digits)}, ${fixed(d.high, digits)}]`;
}

/** Mean (0 for none) and population standard deviation, as the report's ± figures use them. */
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
export const std = (xs: number[]) => {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
};

interface Row {
  envSteps: number;
  /** Episodes the iteration's rollout reported. */
  episodes?: number;
  /** Group runs: episodes the rollout cut at its step limit. */
  episodesCut?: number;
  episodeReturn: number | null;
  successRate: number | null;
  episodeLength?: number | null;
  wallSeconds?: number;
  labelMass?: number | null;
  /** DataSciCoding runs: mean reward of the iteration's programs, share that ran, best so far. */
  meanReward?: number | null;
  programsRun?: number | null;
  bestReward?: number | null;
  /** Credit tasks: Spearman's ρ of the iteration's advantages against the exact A^π. */
  creditAccuracy?: number | null;
  /** The same with a token-level method's advantage at each action's deciding token. */
  creditAccuracyDeciding?: number | null;
  /** Credit tasks: the critic's error against the exact values of the policy that acted. */
  criticRmse?: number | null;
  criticBias?: number | null;
  criticSpearman?: number | null;
  /** Where the collapse monitor fired: its reason; the rollbacks made so far. */
  collapse?: string;
  rollbacks?: number;
  iteration?: number;
}

/** One run of a group, for the per-run table. */
export interface RunSummary {
  name: string;
  /**
   * Env steps at which the running sampled success (over 5 iterations with finished episodes)
   * first reached 50% / 90% (null: never).
   */
  sampledSuccessAt: [number | null, number | null];
  /** Running means over the last iterations with finished episodes, at the end of training. */
  finalSampled: { successRate: number; episodeReturn: number; episodeLength: number } | null;
  /** Final greedy evaluation on the training task (null: not evaluated). */
  greedy: { successRate: number; meanReturn: number } | null;
  /**
   * Mean `labelMass` of the last 5 iterations (the next-token probability on the valid labels'
   * first tokens); null for runs that did not log it.
   */
  finalLabelMass: number | null;
  /** Held-out perplexity of the policy before and after training (null: not measured). */
  perplexity: [number, number] | null;
  /** DataSciCoding runs: what their programs did (null for other environments). */
  programs: RunPrograms | null;
  /**
   * Credit tasks: the mean over iterations of the per-iteration credit accuracy (Spearman's ρ
   * between the advantages the run gave its actions and their exact A^π), over the iterations
   * where it is defined; null for runs that did not log it or where it never was.
   */
  creditAccuracy: number | null;
  /**
   * The same with a token-level method's advantage at the token that decides each action's label
   * (where it parts from every other valid label) instead of its first; equal to
   * `creditAccuracy` for action-level methods; null for runs that did not log it.
   */
  creditAccuracyDeciding?: number | null;
  /**
   * Credit tasks, algorithms with a critic: the mean over iterations of the critic's error
   * against the exact values of the policy that acted, pooled over every token prefix of the
   * iteration's chosen actions (`criticRmse`, `criticBias`, `criticSpearman` of its metrics
   * rows); null for runs that did not log it (no critic, or made before it was logged).
   */
  criticError?: CriticErrorSummary<number> | null;
  /**
   * A group run made before group rollouts counted their cut episodes: its sampled success was
   * re-counted from its metrics rows (see {@link readRows}).
   */
  successRecounted?: boolean;
  /**
   * The best checkpoint's final greedy evaluation on the training task, when the run kept one
   * (`--keep-best`) apart from its latest (eval.json's `best`); absent otherwise.
   */
  best?: { iteration: number; greedy: { successRate: number; meanReturn: number } | null };
  /**
   * Where its collapse monitor fired (metrics rows with `collapse`): how often, at which
   * iterations, and the rollbacks made; absent when it never fired.
   */
  collapses?: { alarms: number; iterations: number[]; rollbacks: number };
  envSteps: number;
  wallSeconds: number;
}

/** The programs of one DataSciCoding run: first and last 5 iterations, and the best reward. */
export interface RunPrograms {
  startReward: number;
  finalReward: number;
  startRun: number;
  finalRun: number;
  best: number;
  /**
   * The same over first attempts only (an episode's first prompt, as the prior samples them; the
   * fix-it turns after a failure left out); null without programs.jsonl or the run's env count.
   */
  firstAttempts: { startReward: number; finalReward: number } | null;
}

/** The rows of a DataSciCoding run's programs.jsonl ([] when it has none). */
function readProgramRows(runDir: string): ProgramRow[] {
  const file = join(runDir, 'programs.jsonl');
  if (!dataExists(file)) return [];
  return readText(file)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProgramRow);
}

/** Mean reward of a run's first-attempt programs, first and last `k` iterations. */
function firstAttemptFigures(runDir: string, k: number): RunPrograms['firstAttempts'] {
  const programs = readProgramRows(runDir);
  const envs = readRunJson<{ envs?: number }>(runDir, 'config.json', {}).envs;
  if (programs.length === 0 || typeof envs !== 'number') return null;
  const attempts = attemptsOf(programs, envs);
  const first = programs.filter((_, i) => attempts[i] === 1);
  const iterations = [...new Set(programs.map((p) => p.iteration))].sort((a, b) => a - b);
  const of = (its: number[]) =>
    mean(first.filter((p) => its.includes(p.iteration)).map((p) => p.reward));
  return { startReward: of(iterations.slice(0, k)), finalReward: of(iterations.slice(-k)) };
}

/** Program figures of a run's metrics rows, or null when it logged none (not DataSciCoding). */
function runPrograms(rows: readonly Row[], k = 5, runDir?: string): RunPrograms | null {
  if (rows.length === 0 || typeof rows[0]!.programsRun !== 'number') return null;
  const window = (key: ProgramMetric, from: 'start' | 'end') => {
    const part = from === 'start' ? rows.slice(0, k) : rows.slice(-k);
    return mean(part.map((r) => r[key] as number));
  };
  return {
    startReward: window('meanReward', 'start'),
    finalReward: window('meanReward', 'end'),
    startRun: window('programsRun', 'start'),
    finalRun: window('programsRun', 'end'),
    best: rows.at(-1)!.bestReward as number,
    firstAttempts: runDir === undefined ? null : firstAttemptFigures(runDir, k),
  };
}

/** The metrics rows as written. */
function rawRows(runDir: string): Row[] {
  return readText(join(runDir, 'metrics.jsonl'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
}

/**
 * Episodes per iteration of a group run (GRPO, RLOO, GiGPO: groups × group size) made before
 * group rollouts counted the episodes they cut (its metrics rows have no `episodesCut`) on an
 * environment that reports success; null for every other run.
 */
export function uncountedCuts(
  runDir: string,
  rows: readonly Row[] = rawRows(runDir),
): number | null {
  const cfg = readRunJson<{ groups?: unknown; groupSize?: unknown }>(runDir, 'config.json', {});
  if (typeof cfg.groups !== 'number' || typeof cfg.groupSize !== 'number') return null;
  if (rows.length === 0 || 'episodesCut' in rows[0]!) return null;
  if (!rows.some((r) => typeof r.successRate === 'number')) return null;
  return cfg.groups * cfg.groupSize;
}

/**
 * A run's metrics rows. A group run made before its rollouts counted the episodes they cut has
 * its success rate re-counted over every episode it played, the cut ones as not successful
 * (successRate × episodes / (groups × group size)); its rows then carry `episodesCut`.
 */
export function readRows(runDir: string): Row[] {
  return loadRows(runDir).rows;
}

/** {@link readRows}, and whether the success was re-counted. */
function loadRows(runDir: string): { rows: Row[]; recounted: boolean } {
  const rows = rawRows(runDir);
  const played = uncountedCuts(runDir, rows);
  if (played === null) return { rows, recounted: false };
  return {
    rows: rows.map((r) => {
      const ended = r.episodes ?? 0;
      return {
        ...r,
        successRate: ((r.successRate ?? 0) * ended) / played,
        episodesCut: played - ended,
      };
    }),
    recounted: true,
  };
}

/** Running mean over the last `k` iterations that finished episodes (carried forward). */
export function smoothed(
  rows: readonly Row[],
  key: 'episodeReturn' | 'successRate' | 'episodeLength' | 'labelMass' | ProgramMetric,
  k = 5,
): number[] {
  const seen: number[] = [];
  return rows.map((r) => {
    const v = r[key];
    if (typeof v === 'number' && Number.isFinite(v)) seen.push(v);
    const w = seen.slice(-k);
    return w.length ? mean(w) : Number.NaN;
  });
}

type EvalResults = Record<string, { meanReturn: number; successRate: number }>;

/** A JSON file of a run folder, or `missing` while it has not been written. */
function readRunJson<T>(runDir: string, name: string, missing: T): T {
  const f = join(runDir, name);
  return dataExists(f) ? (JSON.parse(readText(f)) as T) : missing;
}

/**
 * A run's final evaluation by `task/greedy` and `task/sampled` ({} before it is written): its
 * latest checkpoint's, or with `best` its best checkpoint's where it kept one apart (eval.json's
 * `best`).
 */
function readEval(runDir: string, checkpoint: 'latest' | 'best' = 'latest'): EvalResults {
  const ev = readRunJson<{ results: EvalResults; best?: { results: EvalResults } }>(
    runDir,
    'eval.json',
    { results: {} },
  );
  return checkpoint === 'best' && ev.best ? ev.best.results : ev.results;
}

/** The best checkpoint's final evaluation on `trainTask` (eval.json's `best`), or undefined. */
function readBestEval(runDir: string, trainTask: string): RunSummary['best'] {
  const best = readRunJson<{ best?: { iteration: number; results: EvalResults } }>(
    runDir,
    'eval.json',
    {},
  ).best;
  if (!best) return undefined;
  const g = best.results[`${trainTask}/greedy`];
  return {
    iteration: best.iteration,
    greedy: g ? { successRate: g.successRate, meanReturn: g.meanReturn } : null,
  };
}

/** Where a run's collapse monitor fired, from its metrics rows (undefined: never). */
function collapsesOf(rows: readonly Row[]): RunSummary['collapses'] {
  const fired = rows.filter((r) => typeof r.collapse === 'string');
  if (fired.length === 0) return undefined;
  const rollbacks = Math.max(
    0,
    ...rows.map((r) => (typeof r.rollbacks === 'number' ? r.rollbacks : 0)),
  );
  return { alarms: fired.length, iterations: fired.map((r) => Number(r.iteration)), rollbacks };
}

/** The per-run facts the report's last table shows. */
export function summariseRun(
  runDir: string,
  trainTask: string,
  checkpoint: 'latest' | 'best' = 'latest',
): RunSummary {
  const { rows, recounted } = loadRows(runDir);
  const success = smoothed(rows, 'successRate');
  // Thresholds count only once the window is full, so one lucky early episode does not.
  let withEpisodes = 0;
  const full = rows.map((r) => {
    if (typeof r.successRate === 'number' && Number.isFinite(r.successRate)) withEpisodes++;
    return withEpisodes >= 5;
  });
  const firstAt = (threshold: number) => {
    const i = success.findIndex((v, j) => full[j] && v >= threshold);
    return i < 0 ? null : rows[i]!.envSteps;
  };
  const last = rows.length - 1;
  const length = smoothed(rows, 'episodeLength');
  const finalSampled = Number.isFinite(success[last])
    ? {
        successRate: success[last]!,
        episodeReturn: smoothed(rows, 'episodeReturn')[last]!,
        episodeLength: length[last]!,
      }
    : null;
  const greedy = readEval(runDir, checkpoint)[`${trainTask}/greedy`] ?? null;
  const mass = smoothed(rows, 'labelMass')[last];
  const ppl = readRunJson<{ before?: number; after?: number }>(runDir, 'perplexity.json', {});
  return {
    name: basename(runDir),
    sampledSuccessAt: [firstAt(0.5), firstAt(0.9)],
    finalSampled,
    greedy: greedy && { successRate: greedy.successRate, meanReturn: greedy.meanReturn },
    finalLabelMass: mass !== undefined && Number.isFinite(mass) ? mass : null,
    perplexity:
      typeof ppl.before === 'number' && typeof ppl.after === 'number'
        ? [ppl.before, ppl.after]
        : null,
    programs: runPrograms(rows, 5, runDir),
    creditAccuracy: meanCreditAccuracy(rows, 'creditAccuracy'),
    creditAccuracyDeciding: meanCreditAccuracy(rows, 'creditAccuracyDeciding'),
    // Absent for runs without a critic error, so that reports of older runs stay as they were.
    ...(meanCriticError(rows) ? { criticError: meanCriticError(rows) } : {}),
    ...(recounted ? { successRecounted: true } : {}),
    ...(readBestEval(runDir, trainTask) ? { best: readBestEval(runDir, trainTask) } : {}),
    ...(collapsesOf(rows) ? { collapses: collapsesOf(rows) } : {}),
    envSteps: rows[last]?.envSteps ?? 0,
    wallSeconds: rows[last]?.wallSeconds ?? 0,
  };
}

/** Mean of a run's defined per-iteration credit accuracies (null: none logged or none defined). */
function meanCreditAccuracy(
  rows: readonly Row[],
  key: 'creditAccuracy' | 'creditAccuracyDeciding',
): number | null {
  const xs = rows
    .map((r) => r[key])
    .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return xs.length ? mean(xs) : null;
}

/** Means over a run's iterations of its critic-error columns (null: never logged). */
function meanCriticError(rows: readonly Row[]): CriticErrorSummary<number> | null {
  const of = (key: 'criticRmse' | 'criticBias' | 'criticSpearman') => {
    const xs = rows
      .map((r) => r[key])
      .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return xs.length ? mean(xs) : null;
  };
  const rmse = of('criticRmse');
  const bias = of('criticBias');
  if (rmse === null || bias === null) return null;
  return { rmse, bias, spearman: of('criticSpearman') };
}

/** Per-iteration figures of the programs a DataSciCoding run wrote (metrics columns). */
export type ProgramMetric = 'meanReward' | 'programsRun' | 'bestReward';

/**
 * Mean ± std curves of a group on its common env-step grid, from the first iteration at which at
 * least half of its runs have a value.
 */
export function groupCurve(g: Group, key: 'episodeReturn' | 'successRate' | ProgramMetric): Series {
  const all = g.runDirs.map(readRows);
  const len = Math.min(...all.map((r) => r.length));
  // The best reward so far is already a running figure; the others are averaged over 5 iterations.
  const curves = all.map((rows) => smoothed(rows, key, key === 'bestReward' ? 1 : 5).slice(0, len));
  const points: [number, number][] = [];
  const spread: number[] = [];
  for (let i = 0; i < len; i++) {
    const vals = curves.map((c) => c[i]!).filter(Number.isFinite);
    // A point once at least half the seeds have a value: before that, the mean would be that of
    // the one or two seeds whose first episodes ended soonest (and soonest ends success).
    if (!vals.length || vals.length * 2 < curves.length) continue;
    points.push([all[0]![i]!.envSteps, mean(vals)]);
    spread.push(std(vals));
  }
  const n = g.runDirs.length;
  return { name: `${g.label} (${n} seed${n === 1 ? '' : 's'})`, points, spread };
}

export function summarise(
  g: Group,
  trainTask: string,
  optimum: number | undefined,
  checkpoint: 'latest' | 'best' = 'latest',
): GroupSummary {
  const evals = g.runDirs.map((d) => readEval(d, checkpoint));
  const runs = g.runDirs.map((d) => summariseRun(d, trainTask, checkpoint));
  const credit = runs.map((r) => r.creditAccuracy).filter((x): x is number => x !== null);
  const deciding = runs
    .map((r) => r.creditAccuracyDeciding ?? null)
    .filter((x): x is number => x !== null);
  const critic = runs.flatMap((r) => (r.criticError ? [r.criticError] : []));
  const spread = (xs: number[]): [number, number] => [mean(xs), std(xs)];
  const rhos = critic.flatMap((c) => (c.spearman === null ? [] : [c.spearman]));
  const greedy = (task: string) =>
    evals.map((e) => e[`${task}/greedy`]).filter((r) => r !== undefined);
  const fin = greedy(trainTask);
  const tasks = [...new Set(evals.flatMap((e) => Object.keys(e)))]
    .filter((k) => k.endsWith('/greedy'))
    .map((k) => k.slice(0, -'/greedy'.length));
  return {
    label: g.label,
    seeds: g.runDirs.length,
    finalReturn: [mean(fin.map((r) => r.meanReturn)), std(fin.map((r) => r.meanReturn))],
    finalSuccess: [mean(fin.map((r) => r.successRate)), std(fin.map((r) => r.successRate))],
    stepsTo90: g.runDirs.map((d) => {
      if (optimum === undefined) return null;
      const rows = readRows(d);
      const s = smoothed(rows, 'episodeReturn');
      const i = s.findIndex((v) => v >= 0.9 * optimum);
      return i < 0 ? null : rows[i]!.envSteps;
    }),
    generalisation: Object.fromEntries(
      tasks.map((t) => [t, mean(greedy(t).map((r) => r.successRate))]),
    ),
    creditAccuracy: credit.length ? [mean(credit), std(credit)] : null,
    creditAccuracyDeciding: deciding.length ? [mean(deciding), std(deciding)] : null,
    ...(critic.length
      ? {
          criticError: {
            rmse: spread(critic.map((c) => c.rmse)),
            bias: spread(critic.map((c) => c.bias)),
            spearman: rhos.length ? spread(rhos) : null,
          },
        }
      : {}),
    runs,
  };
}

/** What a group's DataSciCoding programs did: at the start, at the end, and the best one. */
export interface ProgramSummary {
  label: string;
  /** Mean reward of the programs of the first / last 5 iterations: mean ± std over seeds. */
  startReward: [number, number];
  finalReward: [number, number];
  /** Share of programs that ran in the first / last 5 iterations: mean ± std over seeds. */
  startRun: [number, number];
  finalRun: [number, number];
  /** Best reward of any program of the run: mean ± std over seeds. */
  best: [number, number];
  /** Each seed's figures, in the group's order of runs. */
  perSeed: RunPrograms[];
}

/** The program figures of a group, or null when its runs did not log them (not DataSciCoding). */
export function programSummary(g: Group, k = 5): ProgramSummary | null {
  return programSummaryOf(
    g.label,
    g.runDirs.map((d) => runPrograms(readRows(d), k, d)),
  );
}

/** The same from the runs' figures already read (a group's `summarise` holds them, k = 5). */
export function programSummaryOf(
  label: string,
  all: readonly (RunPrograms | null)[],
): ProgramSummary | null {
  if (all.length === 0 || all.some((p) => p === null)) return null;
  const perSeed = all as RunPrograms[];
  const ms = (key: Exclude<keyof RunPrograms, 'firstAttempts'>): [number, number] => {
    const xs = perSeed.map((p) => p[key]);
    return [mean(xs), std(xs)];
  };
  return {
    label,
    startReward: ms('startReward'),
    finalReward: ms('finalReward'),
    startRun: ms('startRun'),
    finalRun: ms('finalRun'),
    best: ms('best'),
    perSeed,
  };
}

/** How far above the prior a setting's last 5 iterations must be to count (the protocol's 0.03). */
export const PRIOR_MARGIN = 0.03;

/** The programs table of a DataSciCoding comparison, with the prior beside it when given. */
export function programsMarkdown(
  rows: readonly ProgramSummary[],
  prior?: PriorReference,
): string[] {
  if (rows.length === 0) return [];
  const f = ([m, s]: [number, number]) => `${fixed(m, 3)} ± ${fixed(s, 3)}`;
  const p = ([m, s]: [number, number]) => `${fixed(100 * m, 0)}% ± ${fixed(100 * s, 0)}%`;
  const lines = [
    '',
    '## Programs (DataSciCoding)',
    '',
    `Mean reward of the sampled programs (a failure counts −1) and share that ran, over the first and the last 5 iterations, and the best reward of the run; mean ± std over seeds.${prior ? ` The prior: ${prior.samples} programs of the untrained model on ${prior.dataset} (${prior.file}), mean reward ± its standard error, the share that ran and the best ROC AUC; the dashed line on the charts.` : ''} Curves: mean-reward.png, programs-run.png, best-reward.png.`,
    '',
    '| run | mean reward, first 5 iterations | mean reward, last 5 | ran, first 5 | ran, last 5 | best reward |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${f(r.startReward)} | ${f(r.finalReward)} | ${p(r.startRun)} | ${p(r.finalRun)} | ${f(r.best)} |`,
    ),
  ];
  if (!prior) return lines;
  const se = prior.meanRewardSe === null ? '' : ` ± ${fixed(prior.meanRewardSe, 3)} (s.e.)`;
  const best = prior.bestAuc === null ? '–' : fixed(prior.bestAuc, 3);
  const ran = `${fixed(100 * prior.ran, 0)}%`;
  lines.push(
    `| prior (${prior.samples} programs) | ${fixed(prior.meanReward, 3)}${se} | | ${ran} | | ${best} |`,
  );
  const signed = (x: number, digits: number) => {
    const s = fixed(x, digits);
    return s.startsWith('−') ? s : `+${s}`;
  };
  lines.push(
    '',
    `Against the prior: each seed's last 5 iterations minus the prior's programs, mean ± std over seeds, and the seeds whose mean reward is at least ${PRIOR_MARGIN} above the prior's. The prior samples only an episode's first prompt, while a run's programs include the fix-it turns after a failure (harder: they start from a program that failed), so the last two columns take the runs' first attempts alone (rebuilt from programs.jsonl).`,
    '',
    '| run | mean reward, last 5 − prior | ran, last 5 − prior (points) | seeds ≥ prior + 0.03 | first attempts: mean reward, first 5 → last 5 | first attempts, last 5 − prior |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const dr = r.perSeed.map((x) => x.finalReward - prior.meanReward);
      const dn = r.perSeed.map((x) => 100 * (x.finalRun - prior.ran));
      const above = dr.filter((d) => d >= PRIOR_MARGIN).length;
      const fa = r.perSeed.map((x) => x.firstAttempts);
      const first = fa.every((x) => x !== null)
        ? (() => {
            const start = fa.map((x) => x!.startReward);
            const end = fa.map((x) => x!.finalReward);
            const d = end.map((x) => x - prior.meanReward);
            return `${fixed(mean(start), 3)} → ${fixed(mean(end), 3)} | ${signed(mean(d), 3)} ± ${fixed(std(d), 3)}`;
          })()
        : '– | –';
      return `| ${r.label} | ${signed(mean(dr), 3)} ± ${fixed(std(dr), 3)} | ${signed(mean(dn), 1)} ± ${fixed(std(dn), 1)} | ${above}/${dr.length} | ${first} |`;
    }),
  );
  return lines;
}

/** The per-pair comparison of the report: A − B on each metric over their seeds. */
export interface PairDifference {
  a: string;
  b: string;
  /**
   * Per metric (null: too few runs): final greedy return, and final greedy success and env steps
   * to 90% sampled success, or for DataSciCoding the programs' mean reward and share that ran over
   * the last 5 iterations and the best reward.
   */
  metrics: Partial<Record<PairMetric, Difference | null>>;
  /**
   * Holm-adjusted p-values of `metrics`, over the report's whole family: every p-value of every
   * pair and metric, and every Fisher test of {@link solved}.
   */
  holm: Partial<Record<PairMetric, number>>;
  /**
   * Seeds whose final greedy success reached {@link SOLVED_AT}, per group, with Fisher's exact
   * test of the two counts and its Holm-adjusted p-value; null for DataSciCoding (no success) or
   * runs without a greedy evaluation.
   */
  solved: { a: Count; b: Count; p: number; holm: number } | null;
}

/** A seed counts as solved when its final greedy success is at least this. */
export const SOLVED_AT = 0.9;

/** Seeds solved greedily of a group's runs, or null when a run has no greedy evaluation. */
export function solvedSeeds(s: GroupSummary): Count | null {
  const runs = s.runs ?? [];
  if (runs.length === 0 || runs.some((r) => r.greedy === null)) return null;
  return {
    successes: runs.filter((r) => r.greedy!.successRate >= SOLVED_AT).length,
    of: runs.length,
  };
}

export type PairMetric =
  | 'greedyReturn'
  | 'greedySuccess'
  | 'stepsTo90Sampled'
  | 'finalMeanReward'
  | 'finalRun'
  | 'bestReward'
  | 'creditAccuracy'
  | 'creditAccuracyDeciding';

const PAIR_METRICS: Record<PairMetric, { title: string; of: (r: RunSummary) => number | null }> = {
  greedyReturn: { title: 'final greedy return', of: (r) => r.greedy?.meanReturn ?? null },
  greedySuccess: { title: 'final greedy success', of: (r) => r.greedy?.successRate ?? null },
  // A run that never reached 90% counts with its total env steps: a lower bound of its value,
  // which favours it, so a significant difference stays significant.
  stepsTo90Sampled: {
    title: 'env steps to 90% sampled success',
    of: (r) => r.sampledSuccessAt[1] ?? r.envSteps,
  },
  finalMeanReward: {
    title: 'mean reward, last 5 iterations',
    of: (r) => r.programs?.finalReward ?? null,
  },
  finalRun: { title: 'share that ran, last 5 iterations', of: (r) => r.programs?.finalRun ?? null },
  bestReward: { title: 'best reward', of: (r) => r.programs?.best ?? null },
  creditAccuracy: { title: 'credit accuracy', of: (r) => r.creditAccuracy },
  creditAccuracyDeciding: {
    title: 'credit accuracy at the deciding token',
    of: (r) => r.creditAccuracyDeciding ?? null,
  },
};

const PAIR_DIGITS: Record<PairMetric, number> = {
  greedyReturn: 3,
  greedySuccess: 2,
  stepsTo90Sampled: 0,
  finalMeanReward: 3,
  finalRun: 3,
  bestReward: 4,
  creditAccuracy: 3,
  creditAccuracyDeciding: 3,
};

/**
 * The metrics compared between settings: with programs (DataSciCoding, where no episode is a
 * "success" and there is no optimum) the programs' figures, otherwise success and speed.
 */
function pairMetricsOf(summaries: readonly GroupSummary[]): PairMetric[] {
  const runs = summaries.flatMap((s) => s.runs ?? []);
  if (runs.length > 0 && runs.every((r) => r.programs))
    return ['greedyReturn', 'finalMeanReward', 'finalRun', 'bestReward'];
  // Credit tasks compare credit accuracy too: where any run has one (a run whose advantages never
  // ranked its actions, e.g. all equal in every iteration, has none; a pair without values on
  // one side shows no test).
  const credit = runs.some((r) => r.creditAccuracy !== null);
  // Runs made before the deciding-token measure existed have none: it is compared only when
  // some run logged it.
  const deciding = runs.some((r) => (r.creditAccuracyDeciding ?? null) !== null);
  return [
    'greedyReturn',
    'greedySuccess',
    'stepsTo90Sampled',
    ...(credit ? (['creditAccuracy'] as const) : []),
    ...(deciding ? (['creditAccuracyDeciding'] as const) : []),
  ];
}

/**
 * Bootstrap 95% intervals and permutation p-values of the difference in means between every pair
 * of groups, per metric (seeded, so a report repeats exactly).
 */
export function pairwiseDifferences(
  summaries: readonly GroupSummary[],
  seed = 12_345,
): PairDifference[] {
  const out: PairDifference[] = [];
  const keys = pairMetricsOf(summaries);
  const coding = keys.includes('finalMeanReward');
  for (let i = 0; i < summaries.length; i++)
    for (let j = i + 1; j < summaries.length; j++) {
      const [A, B] = [summaries[i]!, summaries[j]!];
      const metrics: Partial<Record<PairMetric, Difference | null>> = {};
      for (const key of keys) {
        const m = PAIR_METRICS[key];
        const xs = A.runs.map(m.of).filter((x): x is number => x !== null);
        const ys = B.runs.map(m.of).filter((x): x is number => x !== null);
        metrics[key] = xs.length && ys.length ? compareGroups(xs, ys, { seed }) : null;
      }
      const [sa, sb] = [solvedSeeds(A), solvedSeeds(B)];
      const solved =
        coding || !sa || !sb ? null : { a: sa, b: sb, p: fisherExact(sa, sb), holm: Number.NaN };
      out.push({ a: A.label, b: B.label, metrics, holm: {}, solved });
    }
  // Holm over the report's family: every p-value above, in a fixed order.
  const family: { p: number; set: (q: number) => void }[] = [];
  for (const pair of out) {
    for (const key of keys) {
      const d = pair.metrics[key];
      if (d)
        family.push({
          p: d.p,
          set: (q) => {
            pair.holm[key] = q;
          },
        });
    }
    const f = pair.solved;
    if (f)
      family.push({
        p: f.p,
        set: (q) => {
          f.holm = q;
        },
      });
  }
  const adjusted = holm(family.map((t) => t.p));
  for (const [i, t] of family.entries()) t.set(adjusted[i]!);
  return out;
}

/** A p-value with how it was computed and its Holm-adjusted value. */
function pText(p: number, how: string, adjusted: number | undefined): string {
  const mark =
    p >= 0.05 ? ' (n.s.)' : adjusted !== undefined && adjusted >= 0.05 ? ' (n.s. after Holm)' : '';
  // Below 0.001 three decimals would print 0.000, which no permutation or Fisher p-value is.
  const small = (x: number) => (x < 0.001 ? '< 0.001' : fixed(x, 3));
  const holmPart = adjusted === undefined ? '' : `; Holm ${small(adjusted)}`;
  return `p ${p < 0.001 ? '' : '= '}${small(p)} (${how}${holmPart})${mark}`;
}

/**
 * The power line of a report: the smallest difference in solve rate Fisher's test detects with
 * 80% power at the design's group sizes, and its power for 0.3 against 0.7.
 */
export function powerLine(pairs: readonly PairDifference[]): string | null {
  const sizes = new Set<string>();
  for (const p of pairs) if (p.solved) sizes.add(`${p.solved.a.of},${p.solved.b.of}`);
  if (sizes.size === 0) return null;
  const parts = [...sizes].map((key) => {
    const [na, nb] = key.split(',').map(Number) as [number, number];
    const delta = detectableDifference(na, nb);
    const at = fisherPower(na, nb, 0.3, 0.7);
    const who = na === nb ? `${na} seeds per setting` : `${na} against ${nb} seeds`;
    const test = "Fisher's exact test at the 5% level (unadjusted)";
    return delta === null
      ? `with ${who}, no difference in solve rate reaches 80% power with ${test}, and its power for 0.3 against 0.7 is ${fixed(100 * at, 0)}%`
      : `with ${who}, ${test} detects a difference in solve rate of ${fixed(delta, 2)} (true rates 0.5 ∓ half of it) with 80% power, and has ${fixed(100 * at, 0)}% power for 0.3 against 0.7`;
  });
  return `Power: ${parts.join('; ')}.`;
}

/** The report's section on pairwise differences, saying plainly which are not significant. */
function differencesMarkdown(pairs: readonly PairDifference[]): string[] {
  if (pairs.length === 0) return [];
  const keys = Object.keys(pairs[0]!.metrics) as PairMetric[];
  const withSolved = pairs.some((p) => p.solved);
  const cell = (d: Difference | null | undefined, adjusted: number | undefined, digits: number) =>
    !d
      ? '–'
      : `${differenceText(d, digits)}, ${pText(d.p, d.exact ? 'exact' : 'Monte Carlo', adjusted)}`;
  const solvedCell = (p: PairDifference) =>
    p.solved
      ? `${p.solved.a.successes}/${p.solved.a.of} vs ${p.solved.b.successes}/${p.solved.b.of}, ${pText(p.solved.p, 'Fisher', p.solved.holm)}`
      : '–';
  const digits = PAIR_DIGITS;
  const notSignificant = pairs.flatMap((p) => [
    ...keys
      .filter((k) => p.metrics[k] && (p.holm[k] ?? p.metrics[k]!.p) >= 0.05)
      .map((k) => `${p.a} − ${p.b}: ${PAIR_METRICS[k].title}`),
    ...(p.solved && p.solved.holm >= 0.05 ? [`${p.a} − ${p.b}: seeds solved greedily`] : []),
  ]);
  const power = powerLine(pairs);
  return [
    '',
    '## Differences between settings',
    '',
    `Mean of A − mean of B over seeds, with a percentile-bootstrap 95% interval (each group resampled alone) and a two-sided permutation p-value: exact over every split of the seeds when there are at most ${EXACT_LIMIT.toLocaleString('en-US')} splits, otherwise Monte Carlo over 10,000 random splits (each p-value says which).${withSolved ? ` Seeds solved greedily: final greedy success ≥ ${100 * SOLVED_AT}%, compared by Fisher's exact test (two-sided).` : ''} Holm: the p-value adjusted by Holm's method over every test of this table (the family-wise error rate).${keys.includes('stepsTo90Sampled') ? ' Runs that never reached 90% sampled success count with their total env steps (a lower bound).' : ''} "(n.s.)": not significant at the 5% level; "(n.s. after Holm)": significant alone, not after the adjustment.`,
    '',
    `| A − B | ${keys.map((k) => PAIR_METRICS[k].title).join(' | ')} |${withSolved ? ' seeds solved greedily |' : ''}`,
    `|---|${keys.map(() => '---').join('|')}|${withSolved ? '---|' : ''}`,
    ...pairs.map(
      (p) =>
        `| ${p.a} − ${p.b} | ${keys.map((k) => cell(p.metrics[k], p.holm[k], digits[k])).join(' | ')} |${withSolved ? ` ${solvedCell(p)} |` : ''}`,
    ),
    '',
    notSignificant.length
      ? `Not significant at the 5% level after Holm's adjustment: ${notSignificant.join('; ')}.`
      : "Every difference above is significant at the 5% level after Holm's adjustment.",
    ...(power ? ['', power] : []),
  ];
}

/** The report as Markdown (`differences`: the pairwise tests, when the caller has them already). */
export function markdown(
  title: string,
  command: string,
  summaries: readonly GroupSummary[],
  optimum: number | undefined,
  reused: Readonly<Record<string, string>> = {},
  programs: readonly ProgramSummary[] = [],
  prior?: PriorReference,
  differences: readonly PairDifference[] = pairwiseDifferences(summaries),
): string {
  const pct = (x: number) => `${fixed(100 * x, 1)}%`;
  // DataSciCoding: an episode has no success and no optimum; its programs are the measure.
  const coding = programs.length > 0 && programs.length === summaries.length;
  const lines = [`# ${title}`, '', `Command: \`${command}\``, ''];
  if (coding) {
    lines.push(
      '![mean reward of the sampled programs](mean-reward.png)',
      '',
      "Final greedy return: the return of the final evaluation's greedy episodes (the reward of the program that ran, −1 for each turn whose program failed); mean ± std over seeds.",
      '',
      '| run | seeds | final greedy return |',
      '|---|---|---|',
      ...summaries.map(
        (s) =>
          `| ${s.label} | ${s.seeds} | ${fixed(s.finalReturn[0], 3)} ± ${fixed(s.finalReturn[1], 3)} |`,
      ),
    );
    lines.push(...programsMarkdown(programs, prior));
    lines.push(...differencesMarkdown(differences));
  } else {
    // Credit tasks: a column of credit accuracy (mean ρ over iterations, mean ± std over seeds).
    const credit = summaries.some((s) => s.creditAccuracy !== null);
    const deciding = summaries.some((s) => (s.creditAccuracyDeciding ?? null) !== null);
    // Algorithms with a critic: its error against the exact values (RMSE, bias, ρ).
    const critic = summaries.some((s) => (s.criticError ?? null) !== null);
    const cell = (x: [number, number] | null | undefined, shown: boolean) =>
      x ? ` ${fixed(x[0], 3)} ± ${fixed(x[1], 3)} |` : shown ? ' – |' : '';
    const criticCells = (s: GroupSummary) =>
      critic
        ? cell(s.criticError?.rmse, true) +
          cell(s.criticError?.bias, true) +
          cell(s.criticError?.spearman, true)
        : '';
    lines.push(
      '![learning curves](curves.png)',
      '',
      ...(credit
        ? [
            "Credit accuracy: Spearman's ρ between the advantage a run gave each action of an iteration's rollout (the first token's, for token-level methods) and that action's exact A^π under the policy that acted; a run's value is its mean over the iterations where ρ is defined (not all actions of equal exact credit); mean ± std over seeds.",
            ...(deciding
              ? [
                  "At the deciding token: the same with a token-level method's advantage at the token where the chosen label parts from every other valid label (labels that share their first words are decided later); equal to the first for action-level methods.",
                ]
              : []),
            ...(critic
              ? [
                  "Critic V^π RMSE, bias and ρ: the values a run's rollout recorded, which its targets and advantages used, against the exact values of the policy that acted, pooled over every token prefix of the iteration's chosen actions (V(s) alone for TWOSOME; ETPO's soft values against the exact soft values): √mean(V − V^π)², mean(V − V^π) (positive: the critic over-values) and Spearman's ρ(V, V^π); a run's value is its mean over iterations; mean ± std over seeds; – for a run without a critic.",
                ]
              : []),
            '',
          ]
        : []),
      `| run | seeds | final greedy return | final greedy success | env steps to 90% of optimum${optimum === undefined ? '' : ` (${fixed(optimum, 4)})`} |${credit ? ' credit accuracy |' : ''}${deciding ? ' at the deciding token |' : ''}${critic ? ' critic V^π RMSE | critic bias | critic ρ |' : ''}`,
      `|---|---|---|---|---|${credit ? '---|' : ''}${deciding ? '---|' : ''}${critic ? '---|---|---|' : ''}`,
      ...summaries.map((s) => {
        const reached = s.stepsTo90.filter((x): x is number => x !== null);
        const steps = reached.length
          ? `${Math.round(mean(reached))} (${reached.length}/${s.seeds} seeds reached)`
          : `not reached (0/${s.seeds})`;
        const c =
          cell(s.creditAccuracy, credit) +
          cell(s.creditAccuracyDeciding, deciding) +
          criticCells(s);
        return `| ${s.label} | ${s.seeds} | ${fixed(s.finalReturn[0], 3)} ± ${fixed(s.finalReturn[1], 3)} | ${pct(s.finalSuccess[0])} ± ${pct(s.finalSuccess[1])} | ${steps} |${c}`;
      }),
    );
    lines.push(...differencesMarkdown(differences));
    lines.push(...programsMarkdown(programs));
  }
  const tasks = [...new Set(summaries.flatMap((s) => Object.keys(s.generalisation)))];
  if (tasks.length > 1) {
    lines.push(
      '',
      '## Greedy success per task (generalisation)',
      '',
      `| run | ${tasks.join(' | ')} |`,
      `|---|${tasks.map(() => '---').join('|')}|`,
    );
    for (const s of summaries)
      lines.push(
        `| ${s.label} | ${tasks.map((t) => (t in s.generalisation ? pct(s.generalisation[t]!) : '–')).join(' | ')} |`,
      );
  }
  // Runs of a combined report can share a folder name (poad-s1 of two comparisons): then each
  // row names its setting too.
  const names = summaries.flatMap((s) => (s.runs ?? []).map((r) => r.name));
  const clash = new Set(names).size < names.length;
  const runs = summaries.flatMap((s) =>
    (s.runs ?? []).map((r) => (clash ? { ...r, name: `${s.label}: ${r.name}` } : r)),
  );
  const ppl = (r: RunSummary) =>
    r.perplexity ? `${fixed(r.perplexity[0], 2)} → ${fixed(r.perplexity[1], 2)}` : '–';
  if (runs.length && coding) {
    const arrow = (a: number, b: number, f: (x: number) => string) => `${f(a)} → ${f(b)}`;
    const pct0 = (x: number) => `${fixed(100 * x, 0)}%`;
    lines.push(
      '',
      '## Per run',
      '',
      'Programs of the first → last 5 iterations; greedy: the final evaluation; perplexity: on held-out text, before → after training.',
      '',
      '| run | mean reward | ran | best reward | greedy return | perplexity | env steps | training wall (s) |',
      '|---|---|---|---|---|---|---|---|',
      ...runs.map((r) => {
        const p = r.programs!;
        return `| ${r.name} | ${arrow(p.startReward, p.finalReward, (x) => fixed(x, 3))} | ${arrow(p.startRun, p.finalRun, pct0)} | ${fixed(p.best, 4)} | ${r.greedy ? fixed(r.greedy.meanReturn, 3) : '–'} | ${ppl(r)} | ${r.envSteps} | ${Math.round(r.wallSeconds)} |`;
      }),
    );
  } else if (runs.length) {
    const at = (x: number | null) => (x === null ? '–' : String(x));
    const recounted = runs.filter((r) => r.successRecounted).map((r) => r.name);
    lines.push(
      '',
      '## Per run',
      '',
      "Sampled: the training rollouts (running mean over the last 5 iterations with finished episodes). Greedy: the final evaluation. Label mass: the policy's next-token probability on the valid labels' first tokens (mean of the last 5 iterations; 1 = all of it). Perplexity: on held-out text, before → after training.",
      ...(recounted.length
        ? [
            '',
            `Sampled success re-counted for ${recounted.join(', ')}: these group runs were made before group rollouts counted the episodes they cut at their step limit, and their metrics rows give the success of the episodes that ended within it; here, as in newer runs, a cut episode counts as not successful (success × episodes that ended / groups × group size). Their sampled returns still leave the cut episodes out.`,
          ]
        : []),
      '',
      '| run | 50% / 90% sampled success at (env steps) | at the end: sampled success, return, length | greedy success, return | label mass at the end | perplexity | env steps | training wall (s) |',
      '|---|---|---|---|---|---|---|---|',
      ...runs.map((r) => {
        const f = r.finalSampled;
        const end = f
          ? `${pct(f.successRate)}, ${fixed(f.episodeReturn, 3)}, ${fixed(f.episodeLength, 1)}`
          : '–';
        const g = r.greedy ? `${pct(r.greedy.successRate)}, ${fixed(r.greedy.meanReturn, 3)}` : '–';
        const mass = r.finalLabelMass === null ? '–' : fixed(r.finalLabelMass, 3);
        return `| ${r.name} | ${at(r.sampledSuccessAt[0])} / ${at(r.sampledSuccessAt[1])} | ${end} | ${g} | ${mass} | ${ppl(r)} | ${r.envSteps} | ${Math.round(r.wallSeconds)} |`;
      }),
    );
  }
  lines.push(...bestAndCollapsesMarkdown(summaries));
  const copied = Object.entries(reused);
  if (copied.length) {
    lines.push(
      '',
      '## Runs taken from earlier comparisons (`--reuse`: same settings and seed)',
      '',
      ...copied.map(([name, from]) => `- ${name} ← ${from}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The report's section on best checkpoints and collapses, when any run kept a best checkpoint
 * apart from its latest or had its collapse monitor fire: per setting, the final and the best
 * checkpoint's greedy evaluation (mean over the seeds that kept one), and the runs whose monitor
 * fired; then each such run.
 */
export function bestAndCollapsesMarkdown(summaries: readonly GroupSummary[]): string[] {
  const runs = summaries.flatMap((s) => s.runs ?? []);
  if (!runs.some((r) => r.best || r.collapses)) return [];
  const lines = [
    '',
    '## Best checkpoints and collapses',
    '',
    "Final: the latest checkpoint's greedy evaluation; best: the best checkpoint's (`--keep-best`), over the seeds whose best is not their latest (the others' best is their final). Collapses: runs whose collapse monitor fired, its alarms and rollbacks (`--on-collapse`).",
    '',
    '| run | seeds | final greedy return | best greedy return | final greedy success | best greedy success | seeds with a best apart | runs that collapsed | alarms | rollbacks |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of summaries) {
    const own = s.runs ?? [];
    const kept = own.flatMap((r) => (r.best?.greedy ? [r.best.greedy] : []));
    const collapsed = own.filter((r) => r.collapses);
    const m = (xs: number[]) => (xs.length ? fixed(mean(xs), 3) : '–');
    const pct = (x: number) => `${fixed(100 * x, 1)}%`;
    const pm = (xs: number[]) => (xs.length ? pct(mean(xs)) : '–');
    lines.push(
      `| ${s.label} | ${s.seeds} | ${fixed(s.finalReturn[0], 3)} | ${m(kept.map((g) => g.meanReturn))} | ${pct(s.finalSuccess[0])} | ${pm(kept.map((g) => g.successRate))} | ${kept.length} | ${collapsed.length} | ${collapsed.reduce((a, r) => a + r.collapses!.alarms, 0)} | ${collapsed.reduce((a, r) => a + r.collapses!.rollbacks, 0)} |`,
    );
  }
  const fired = runs.filter((r) => r.collapses || r.best);
  lines.push('', '| run | best checkpoint (iteration) | monitor fired at |', '|---|---|---|');
  for (const r of fired)
    lines.push(
      `| ${r.name} | ${r.best ? r.best.iteration : '–'} | ${r.collapses ? r.collapses.iterations.join(', ') : '–'} |`,
    );
  return lines;
}
