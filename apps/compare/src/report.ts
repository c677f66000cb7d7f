import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Series } from '@poad/run-kit';
import { compareGroups, type Difference } from './stats.js';

/** One curve group: an algorithm (or ablation setting) over several seeds. */
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
  runs: RunSummary[];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const std = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

interface Row {
  envSteps: number;
  episodeReturn: number | null;
  successRate: number | null;
  episodeLength?: number | null;
  wallSeconds?: number;
  labelMass?: number | null;
  /** DataSciCoding runs: mean reward of the iteration's programs, share that ran, best so far. */
  meanReward?: number | null;
  programsRun?: number | null;
  bestReward?: number | null;
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
  envSteps: number;
  wallSeconds: number;
}

export function readRows(runDir: string): Row[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
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
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as T) : missing;
}

/** A run's final evaluation by `task/greedy` and `task/sampled` ({} before it is written). */
function readEval(runDir: string): EvalResults {
  return readRunJson<{ results: EvalResults }>(runDir, 'eval.json', { results: {} }).results;
}

/** The per-run facts the report's last table shows. */
export function summariseRun(runDir: string, trainTask: string): RunSummary {
  const rows = readRows(runDir);
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
  const greedy = readEval(runDir)[`${trainTask}/greedy`] ?? null;
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
    envSteps: rows[last]?.envSteps ?? 0,
    wallSeconds: rows[last]?.wallSeconds ?? 0,
  };
}

/** Per-iteration figures of the programs a DataSciCoding run wrote (metrics columns). */
export type ProgramMetric = 'meanReward' | 'programsRun' | 'bestReward';

/** Mean ± std curves of a group on its common env-step grid. */
export function groupCurve(g: Group, key: 'episodeReturn' | 'successRate' | ProgramMetric): Series {
  const all = g.runDirs.map(readRows);
  const len = Math.min(...all.map((r) => r.length));
  // The best reward so far is already a running figure; the others are averaged over 5 iterations.
  const curves = all.map((rows) => smoothed(rows, key, key === 'bestReward' ? 1 : 5).slice(0, len));
  const points: [number, number][] = [];
  const spread: number[] = [];
  for (let i = 0; i < len; i++) {
    const vals = curves.map((c) => c[i]!).filter(Number.isFinite);
    if (!vals.length) continue;
    points.push([all[0]![i]!.envSteps, mean(vals)]);
    spread.push(std(vals));
  }
  const n = g.runDirs.length;
  return { name: `${g.label} (${n} seed${n === 1 ? '' : 's'})`, points, spread };
}

export function summarise(g: Group, trainTask: string, optimum: number | undefined): GroupSummary {
  const evals = g.runDirs.map(readEval);
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
    runs: g.runDirs.map((d) => summariseRun(d, trainTask)),
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
}

/** The program figures of a group, or null when its runs did not log them (not DataSciCoding). */
export function programSummary(g: Group, k = 5): ProgramSummary | null {
  const all = g.runDirs.map(readRows);
  if (all.some((rows) => rows.length === 0 || typeof rows[0]!.programsRun !== 'number'))
    return null;
  const window = (rows: Row[], key: ProgramMetric, from: 'start' | 'end') => {
    const part = from === 'start' ? rows.slice(0, k) : rows.slice(-k);
    return mean(part.map((r) => r[key] as number));
  };
  const ms = (xs: number[]): [number, number] => [mean(xs), std(xs)];
  return {
    label: g.label,
    startReward: ms(all.map((r) => window(r, 'meanReward', 'start'))),
    finalReward: ms(all.map((r) => window(r, 'meanReward', 'end'))),
    startRun: ms(all.map((r) => window(r, 'programsRun', 'start'))),
    finalRun: ms(all.map((r) => window(r, 'programsRun', 'end'))),
    best: ms(all.map((r) => r.at(-1)!.bestReward as number)),
  };
}

/** The programs table of a DataSciCoding comparison. */
export function programsMarkdown(rows: readonly ProgramSummary[]): string[] {
  if (rows.length === 0) return [];
  const f = ([m, s]: [number, number]) => `${m.toFixed(3)} ± ${s.toFixed(3)}`;
  const p = ([m, s]: [number, number]) => `${(100 * m).toFixed(0)}% ± ${(100 * s).toFixed(0)}%`;
  return [
    '',
    '## Programs (DataSciCoding)',
    '',
    'Mean reward of the sampled programs (a failure counts −1) and share that ran, over the first and the last 5 iterations, and the best reward of the run; mean ± std over seeds. Curves: mean-reward.png, programs-run.png, best-reward.png.',
    '',
    '| run | mean reward, first 5 iterations | mean reward, last 5 | ran, first 5 | ran, last 5 | best reward |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${f(r.startReward)} | ${f(r.finalReward)} | ${p(r.startRun)} | ${p(r.finalRun)} | ${f(r.best)} |`,
    ),
  ];
}

/** The per-pair comparison of the report: A − B on each metric over their seeds. */
export interface PairDifference {
  a: string;
  b: string;
  /** Final greedy return, final greedy success, env steps to 90% sampled success (null: too few runs). */
  metrics: Record<PairMetric, Difference | null>;
}

export type PairMetric = 'greedyReturn' | 'greedySuccess' | 'stepsTo90Sampled';

const PAIR_METRICS: Record<PairMetric, { title: string; of: (r: RunSummary) => number | null }> = {
  greedyReturn: { title: 'final greedy return', of: (r) => r.greedy?.meanReturn ?? null },
  greedySuccess: { title: 'final greedy success', of: (r) => r.greedy?.successRate ?? null },
  // A run that never reached 90% counts with its total env steps: a lower bound of its value,
  // which favours it, so a significant difference stays significant.
  stepsTo90Sampled: {
    title: 'env steps to 90% sampled success',
    of: (r) => r.sampledSuccessAt[1] ?? r.envSteps,
  },
};

/**
 * Bootstrap 95% intervals and permutation p-values of the difference in means between every pair
 * of groups, per metric (seeded, so a report repeats exactly).
 */
export function pairwiseDifferences(
  summaries: readonly GroupSummary[],
  seed = 12_345,
): PairDifference[] {
  const out: PairDifference[] = [];
  for (let i = 0; i < summaries.length; i++)
    for (let j = i + 1; j < summaries.length; j++) {
      const [A, B] = [summaries[i]!, summaries[j]!];
      const metrics = {} as Record<PairMetric, Difference | null>;
      for (const [key, m] of Object.entries(PAIR_METRICS) as [
        PairMetric,
        (typeof PAIR_METRICS)[PairMetric],
      ][]) {
        const xs = A.runs.map(m.of).filter((x): x is number => x !== null);
        const ys = B.runs.map(m.of).filter((x): x is number => x !== null);
        metrics[key] = xs.length && ys.length ? compareGroups(xs, ys, { seed }) : null;
      }
      out.push({ a: A.label, b: B.label, metrics });
    }
  return out;
}

/** The report's section on pairwise differences, saying plainly which are not significant. */
function differencesMarkdown(pairs: readonly PairDifference[]): string[] {
  if (pairs.length === 0) return [];
  const keys = Object.keys(PAIR_METRICS) as PairMetric[];
  const cell = (d: Difference | null, digits: number) =>
    d === null
      ? '–'
      : `${d.diff.toFixed(digits)} [${d.low.toFixed(digits)}, ${d.high.toFixed(digits)}], p = ${d.p.toFixed(3)}${d.p < 0.05 ? '' : ' (n.s.)'}`;
  const digits: Record<PairMetric, number> = {
    greedyReturn: 3,
    greedySuccess: 2,
    stepsTo90Sampled: 0,
  };
  const notSignificant = pairs.flatMap((p) =>
    keys
      .filter((k) => p.metrics[k] && p.metrics[k]!.p >= 0.05)
      .map((k) => `${p.a} − ${p.b}: ${PAIR_METRICS[k].title}`),
  );
  return [
    '',
    '## Differences between settings',
    '',
    'Mean of A − mean of B over seeds, with a percentile-bootstrap 95% interval (each group resampled alone) and a two-sided permutation p-value (exact over every split of the seeds when there are at most 100,000). Runs that never reached 90% sampled success count with their total env steps (a lower bound). "(n.s.)": not significant at the 5% level.',
    '',
    `| A − B | ${keys.map((k) => PAIR_METRICS[k].title).join(' | ')} |`,
    `|---|${keys.map(() => '---').join('|')}|`,
    ...pairs.map(
      (p) => `| ${p.a} − ${p.b} | ${keys.map((k) => cell(p.metrics[k], digits[k])).join(' | ')} |`,
    ),
    '',
    notSignificant.length
      ? `Not significant at the 5% level: ${notSignificant.join('; ')}.`
      : 'Every difference above is significant at the 5% level.',
  ];
}

/** The report as Markdown. */
export function markdown(
  title: string,
  command: string,
  summaries: readonly GroupSummary[],
  optimum: number | undefined,
  reused: Readonly<Record<string, string>> = {},
  programs: readonly ProgramSummary[] = [],
): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `# ${title}`,
    '',
    `Command: \`${command}\``,
    '',
    '![learning curves](curves.png)',
    '',
    `| run | seeds | final greedy return | final greedy success | env steps to 90% of optimum${optimum === undefined ? '' : ` (${optimum.toFixed(4)})`} |`,
    '|---|---|---|---|---|',
    ...summaries.map((s) => {
      const reached = s.stepsTo90.filter((x): x is number => x !== null);
      const steps = reached.length
        ? `${Math.round(mean(reached))} (${reached.length}/${s.seeds} seeds reached)`
        : `not reached (0/${s.seeds})`;
      return `| ${s.label} | ${s.seeds} | ${s.finalReturn[0].toFixed(3)} ± ${s.finalReturn[1].toFixed(3)} | ${pct(s.finalSuccess[0])} ± ${pct(s.finalSuccess[1])} | ${steps} |`;
    }),
  ];
  lines.push(...differencesMarkdown(pairwiseDifferences(summaries)));
  lines.push(...programsMarkdown(programs));
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
  if (runs.length) {
    const at = (x: number | null) => (x === null ? '–' : String(x));
    lines.push(
      '',
      '## Per run',
      '',
      "Sampled: the training rollouts (running mean over the last 5 iterations with finished episodes). Greedy: the final evaluation. Label mass: the policy's next-token probability on the valid labels' first tokens (mean of the last 5 iterations; 1 = all of it). Perplexity: on held-out text, before → after training.",
      '',
      '| run | 50% / 90% sampled success at (env steps) | at the end: sampled success, return, length | greedy success, return | label mass at the end | perplexity | env steps | training wall (s) |',
      '|---|---|---|---|---|---|---|---|',
      ...runs.map((r) => {
        const f = r.finalSampled;
        const end = f
          ? `${pct(f.successRate)}, ${f.episodeReturn.toFixed(3)}, ${f.episodeLength.toFixed(1)}`
          : '–';
        const g = r.greedy
          ? `${pct(r.greedy.successRate)}, ${r.greedy.meanReturn.toFixed(3)}`
          : '–';
        const mass = r.finalLabelMass === null ? '–' : r.finalLabelMass.toFixed(3);
        const ppl = r.perplexity
          ? `${r.perplexity[0].toFixed(2)} → ${r.perplexity[1].toFixed(2)}`
          : '–';
        return `| ${r.name} | ${at(r.sampledSuccessAt[0])} / ${at(r.sampledSuccessAt[1])} | ${end} | ${g} | ${mass} | ${ppl} | ${r.envSteps} | ${Math.round(r.wallSeconds)} |`;
      }),
    );
  }
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
