// The tables of "The critic that BAD needs" (docs/results.md), each computed as its protocol says,
// from the comparisons of the study (folders or archives):
//   tuning ROOT      part 1: ROOT/<task>/setting-<i>/ holds the comparison of setting i on task t
//                    (key-token, delayed, loop; seeds 101–105); per setting and task the mean over
//                    seeds of the credit accuracy at the deciding token (creditAccuracyDecidingTied,
//                    each run's mean over its iterations) and of the critic's V^π RMSE, the
//                    eligibility rule (RMSE no worse than setting 0's on every task) and the choice
//                    of POAD-critic; settings not finished yet are listed as such.
//   credit ROOT      part 2: ROOT/<task>/<arm>/ holds the comparison of one arm (seeds 41–50; the
//                    arms of CREDIT_ARMS); per task the arms' means and POAD-critic against each
//                    other arm on the two primary measures (exact permutation test, bootstrap 95%
//                    interval, Holm over the task's 10 tests), then the descriptive columns.
//   choose ROOT      the flags of POAD-critic (ROOT as for tuning), exit code 3 until it is chosen.
//   settings         the tuning settings' flags, one line each, in their order (setting 0: empty).
//   food ROOT        part 3: ROOT/poad-critic/ and ROOT/twosome/ hold the food-preparation
//                    comparisons (seeds 41–70); seeds solved greedily (Fisher's exact test) and
//                    final greedy return (permutation test), each with its bootstrap interval.
//   signal ROOT      exploratory, not in the protocol: per comparison with a critic (ROOT as for
//                    tuning or credit), the spread of the exact A^π over the chosen actions against
//                    the spread of the error of the advantage at the deciding token.
//   etpo ROOT        descriptive: ROOT/<task>/ holds ETPO's comparison on the task (seeds 41–45);
//                    its soft critic's error against the exact soft values, read against their
//                    spread, beside its credit accuracy and greedy success.
// From the repository root:
//   node --import tsx apps/compare/scripts/critic-study-tables.ts tuning results/critic-study/tuning
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  comparisonsIn,
  dataExists,
  findComparison,
  isDataFolder,
  listData,
  readText,
  runsOf,
} from '../src/archive-file.js';
import { differenceText, fixed, SOLVED_AT, std, summariseRun } from '../src/report.js';
import { compareGroups, type Difference, fisherExact, holm } from '../src/stats.js';

/** The credit tasks of the study, in the protocol's order. */
export const STUDY_TASKS = ['key-token', 'delayed', 'loop'] as const;

/** The 16 tuning settings of the protocol: label and flags over the preset. */
export const TUNING_SETTINGS: readonly { label: string; flags: string }[] = [
  { label: "today's critic", flags: '' },
  { label: "the paper's ratio, 20×", flags: '--critic-lr 1e-2' },
  { label: '50×', flags: '--critic-lr 2.5e-2' },
  { label: 'more critic epochs', flags: '--critic-epochs 5' },
  { label: "every layer's hidden states", flags: '--critic-features layers' },
  { label: "the actor's features", flags: '--critic-features actor' },
  {
    label: "the actor's features, gradient into the actor",
    flags: '--critic-features actor --critic-grad-to-actor',
  },
  { label: "the critic's own LoRA adapter", flags: '--critic-adapter lora' },
  { label: 'a target critic every 4 updates', flags: '--target-critic-every 4' },
  { label: 'a Polyak target critic', flags: '--target-critic-every 1 --target-critic-tau 0.05' },
  { label: 'critic warm-up', flags: '--critic-warmup 5' },
  { label: 'no value clipping', flags: '--no-value-clip' },
  {
    label: 'adapter + 20× + 5 epochs',
    flags: '--critic-adapter lora --critic-lr 1e-2 --critic-epochs 5',
  },
  {
    label: 'layers + 20× + warm-up',
    flags: '--critic-features layers --critic-lr 1e-2 --critic-warmup 5',
  },
  {
    label: 'actor + gradient + no clipping',
    flags: '--critic-features actor --critic-grad-to-actor --no-value-clip',
  },
  {
    label: 'adapter + target + warm-up',
    flags: '--critic-adapter lora --target-critic-every 4 --critic-warmup 5',
  },
];

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** A run's mean over its iterations of a metrics column (its finite values); null: none. */
export function runMean(runDir: string, key: string): number | null {
  const values = readText(join(runDir, 'metrics.jsonl'))
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as Record<string, unknown>)[key])
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return values.length ? mean(values) : null;
}

/** The finished runs (those with eval.json) of the comparison in `dir`, or [] when none is there. */
function finishedRuns(dir: string): string[] {
  if (!isDataFolder(dir) && !dataExists(`${dir}.zip`)) return [];
  const c =
    findComparison(dir) ??
    (isDataFolder(dir) ? comparisonsIn(dir)[0] : undefined) ??
    (listData(dir).length ? findComparison(join(dir, listData(dir)[0]!)) : null);
  if (!c) return [];
  return runsOf(c)
    .map((r) => join(c.root, r))
    .filter((r) => dataExists(join(r, 'eval.json')));
}

/** Per setting and task: A (accuracy at the deciding token) and R (V^π RMSE), over its seeds. */
export interface TuningCell {
  seeds: number;
  accuracy: number | null;
  rmse: number | null;
  /** Descriptive, not in the rule: the critic's Spearman ρ with V^π (mean over seeds). */
  rho?: number | null;
  /** Descriptive, not in the rule: seeds whose final greedy success is at least 90%. */
  solved?: number;
}

/** The tuning's cells, by setting number and task. */
export function tuningCells(root: string): TuningCell[][] {
  return TUNING_SETTINGS.map((_, i) =>
    STUDY_TASKS.map((task) => {
      const runs = finishedRuns(join(root, task, `setting-${i}`));
      const acc = runs.map((r) => runMean(r, 'creditAccuracyDecidingTied'));
      const rmse = runs.map((r) => runMean(r, 'criticRmse'));
      const rho = runs.map((r) => runMean(r, 'criticSpearman'));
      const ok = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);
      return {
        seeds: runs.length,
        accuracy: ok(acc).length ? mean(ok(acc)) : null,
        rmse: ok(rmse).length ? mean(ok(rmse)) : null,
        rho: ok(rho).length ? mean(ok(rho)) : null,
        solved: runs.filter((r) => (summariseRun(r, task).greedy?.successRate ?? 0) >= SOLVED_AT)
          .length,
      };
    }),
  );
}

/**
 * The protocol's rule over complete cells (5 seeds each): eligible settings have R no worse than
 * setting 0's on every task; POAD-critic is the eligible one with the largest mean A over the
 * tasks, ties within 0.01 decided by the smaller mean of R / R(setting 0), then the lower number.
 * Null while a setting's cells are incomplete.
 */
export function chooseCritic(cells: readonly TuningCell[][]): {
  chosen: number;
  eligible: number[];
} | null {
  const complete = cells.every((row) =>
    row.every((c) => c.seeds === 5 && c.accuracy !== null && c.rmse !== null),
  );
  if (!complete) return null;
  const base = cells[0]!;
  const eligible = cells
    .map((row, i) => ({ i, row }))
    .filter(({ row }) => row.every((c, t) => c.rmse! <= base[t]!.rmse!))
    .map(({ i }) => i);
  const score = (i: number) => mean(cells[i]!.map((c) => c.accuracy!));
  const ratio = (i: number) => mean(cells[i]!.map((c, t) => c.rmse! / base[t]!.rmse!));
  const best = Math.max(...eligible.map(score));
  const near = eligible.filter((i) => score(i) >= best - 0.01);
  near.sort((a, b) => ratio(a) - ratio(b) || a - b);
  return { chosen: near[0]!, eligible };
}

/** The tuning table and the choice, as markdown lines. */
export function tuningTables(root: string): string[] {
  const cells = tuningCells(root);
  const cell = (c: TuningCell) =>
    c.seeds === 0
      ? 'not run yet'
      : `${c.accuracy === null ? '–' : fixed(c.accuracy, 3)} / ${c.rmse === null ? '–' : fixed(c.rmse, 4)}${c.seeds < 5 ? ` (${c.seeds} of 5 seeds)` : ''}`;
  const lines = [
    '| # | setting | key-token: accuracy / RMSE | delayed | loop |',
    '|---|---|---|---|---|',
    ...cells.map(
      (row, i) => `| ${i} | ${TUNING_SETTINGS[i]!.label} | ${row.map(cell).join(' | ')} |`,
    ),
  ];
  const choice = chooseCritic(cells);
  lines.push('', ...ruleTable(cells, choice?.eligible ?? null));
  lines.push(
    '',
    choice === null
      ? 'POAD-critic: not chosen yet (the rule waits for all 16 settings × 3 tasks × 5 seeds).'
      : `Eligible (RMSE no worse than today's on every task): ${choice.eligible.join(', ')}. POAD-critic: setting ${choice.chosen}, ${TUNING_SETTINGS[choice.chosen]!.label} (\`${TUNING_SETTINGS[choice.chosen]!.flags || 'no flags'}\`).`,
  );
  return lines;
}

/**
 * The rule's own columns per setting (mean accuracy over the tasks, RMSE against setting 0's on
 * each, eligible or not) beside two descriptive ones that the rule does not use: the critic's ρ
 * with V^π and the seeds whose greedy policy solved the task.
 */
export function ruleTable(cells: readonly TuningCell[][], eligible: number[] | null): string[] {
  const base = cells[0]!;
  const complete = (row: readonly TuningCell[]) =>
    row.every((c) => c.seeds === 5 && c.accuracy !== null && c.rmse !== null);
  const rows = cells.map((row, i) => {
    if (!complete(row) || !complete(base)) return `| ${i} | – | – | – | – | – | – | – |`;
    const ratios = row.map((c, t) => fixed(c.rmse! / base[t]!.rmse!, 2));
    const rho = row.map((c) => (c.rho === null || c.rho === undefined ? '–' : fixed(c.rho, 2)));
    const solved = row.map((c) => `${c.solved ?? '–'}`);
    const ok = eligible === null ? '–' : eligible.includes(i) ? 'yes' : 'no';
    return `| ${i} | ${fixed(mean(row.map((c) => c.accuracy!)), 3)} | ${ratios.join(' | ')} | ${ok} | ${rho.join(' / ')} | ${solved.join(' / ')} |`;
  });
  return [
    "| # | mean accuracy over the tasks | RMSE ÷ today's: key-token | delayed | loop | eligible | critic ρ with V^π (k / d / l) | seeds solved greedily of 5 (k / d / l) |",
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

/** The arms of part 2 in the protocol's order, POAD-critic first: folder and label. */
export const CREDIT_ARMS: readonly { arm: string; label: string }[] = [
  { arm: 'poad-critic', label: 'POAD-critic' },
  { arm: 'poad-oracle', label: 'POAD-oracle' },
  { arm: 'poad', label: 'POAD as today' },
  { arm: 'grpo', label: 'GRPO' },
  { arm: 'gigpo', label: 'GiGPO' },
  { arm: 'twosome-labels', label: 'TWOSOME (label tree)' },
];

/** The figures of one run that the study's tables use. */
export interface StudyRun {
  name: string;
  /** Mean over iterations of creditAccuracyDecidingTied (null: never measured). */
  accuracy: number | null;
  /** Env steps to 90% sampled success; a run that never got there counts as its budget + 1. */
  stepsTo90: number;
  /** Means over iterations of the critic's error against V^π (null: the run has no critic). */
  rmse: number | null;
  bias: number | null;
  rho: number | null;
  /** Final greedy success and return on the training task (null: not evaluated). */
  greedySuccess: number | null;
  greedyReturn: number | null;
}

/** A finished run's figures; `task` is its training task (eval.json's `<task>/greedy`). */
export function studyRun(runDir: string, task: string): StudyRun {
  const summary = summariseRun(runDir, task);
  const budget = JSON.parse(readText(join(runDir, 'config.json'))).envSteps;
  if (typeof budget !== 'number')
    throw new Error(`${join(runDir, 'config.json')} has no envSteps: not a training run's folder`);
  return {
    name: summary.name,
    accuracy: runMean(runDir, 'creditAccuracyDecidingTied'),
    stepsTo90: summary.sampledSuccessAt[1] ?? budget + 1,
    rmse: runMean(runDir, 'criticRmse'),
    bias: runMean(runDir, 'criticBias'),
    rho: runMean(runDir, 'criticSpearman'),
    greedySuccess: summary.greedy?.successRate ?? null,
    greedyReturn: summary.greedy?.meanReturn ?? null,
  };
}

/** The finished runs of the comparison in `dir`, as {@link studyRun}s. */
export function studyRuns(dir: string, task: string): StudyRun[] {
  return finishedRuns(dir).map((r) => studyRun(r, task));
}

const SEED = 12_345;
const numbers = (xs: readonly (number | null)[]) => xs.filter((x): x is number => x !== null);
const meanText = (xs: readonly (number | null)[], digits: number) => {
  const ok = numbers(xs);
  return ok.length === 0 ? '–' : fixed(mean(ok), digits);
};

/** One test of part 2: POAD-critic against `other` on `measure`. */
export interface CreditTest {
  other: string;
  measure: 'accuracy' | 'stepsTo90';
  difference: Difference | null;
  holm: number | null;
}

/**
 * Part 2's tests on one task: POAD-critic (the first arm) against each other arm on the credit
 * accuracy at the deciding token and on env steps to 90% sampled success, Holm over the tests that
 * could be made (a pair where a side has no value has none).
 */
export function creditTests(arms: readonly StudyRun[][]): CreditTest[] {
  const [critic, ...others] = arms;
  const tests: CreditTest[] = [];
  for (const [k, other] of others.entries()) {
    for (const measure of ['accuracy', 'stepsTo90'] as const) {
      const a = numbers(critic!.map((r) => r[measure]));
      const b = numbers(other.map((r) => r[measure]));
      tests.push({
        other: CREDIT_ARMS[k + 1]!.label,
        measure,
        difference: a.length && b.length ? compareGroups(a, b, { seed: SEED }) : null,
        holm: null,
      });
    }
  }
  const made = tests.filter((t) => t.difference !== null);
  const adjusted = holm(made.map((t) => t.difference!.p));
  made.forEach((t, i) => {
    t.holm = adjusted[i]!;
  });
  return tests;
}

/** Part 2's tables: per task the arms, then POAD-critic's tests. */
export function creditTables(root: string): string[] {
  const lines: string[] = [];
  for (const task of STUDY_TASKS) {
    const arms = CREDIT_ARMS.map(({ arm }) => studyRuns(join(root, task, arm), task));
    lines.push(
      `**${task}**`,
      '',
      '| arm | seeds | credit accuracy at the deciding token | env steps to 90% sampled success | critic V^π RMSE | bias | ρ | greedy success |',
      '|---|---|---|---|---|---|---|---|',
      ...arms.map(
        (runs, i) =>
          `| ${CREDIT_ARMS[i]!.label} | ${runs.length} | ${meanText(
            runs.map((r) => r.accuracy),
            3,
          )} | ${meanText(
            runs.map((r) => r.stepsTo90),
            0,
          )} | ${meanText(
            runs.map((r) => r.rmse),
            4,
          )} | ${meanText(
            runs.map((r) => r.bias),
            4,
          )} | ${meanText(
            runs.map((r) => r.rho),
            3,
          )} | ${meanText(
            runs.map((r) => r.greedySuccess),
            2,
          )} |`,
      ),
      '',
    );
    if (arms.some((runs) => runs.length < 10)) {
      lines.push('Tests: not made yet (the protocol waits for 10 seeds in every arm).', '');
      continue;
    }
    lines.push(
      '| POAD-critic − | measure | difference [95% interval] | p (exact) | Holm |',
      '|---|---|---|---|---|',
      ...creditTests(arms).map((t) => {
        const what =
          t.measure === 'accuracy' ? 'credit accuracy at the deciding token' : 'env steps to 90%';
        if (t.difference === null) return `| ${t.other} | ${what} | no values | – | – |`;
        const d = t.difference;
        return `| ${t.other} | ${what} | ${differenceText(d, t.measure === 'accuracy' ? 3 : 0)} | ${fixed(d.p, 4)}${d.exact ? '' : ' (Monte Carlo)'} | ${fixed(t.holm!, 4)}${t.holm! < 0.05 ? ' **significant**' : ''} |`;
      }),
      '',
    );
  }
  return lines;
}

/** Part 3: POAD-critic against TWOSOME on food-preparation, as the protocol reports it. */
export function foodTables(root: string): string[] {
  const task = 'food-preparation';
  const [critic, twosome] = ['poad-critic', 'twosome'].map((arm) =>
    studyRuns(join(root, arm), task),
  ) as [StudyRun[], StudyRun[]];
  const head = `POAD-critic: ${critic.length} of 30 seeds finished; TWOSOME: ${twosome.length} of 30.`;
  if (critic.length < 30 || twosome.length < 30)
    return [head, 'Tests: not made yet (the protocol waits for all 60 runs).'];
  const solved = (runs: StudyRun[]) =>
    runs.map((r) => ((r.greedySuccess ?? 0) >= SOLVED_AT ? 1 : 0));
  const [sa, sb] = [solved(critic), solved(twosome)];
  const count = (xs: number[]) => ({ successes: xs.reduce((a, b) => a + b, 0), of: xs.length });
  const [ca, cb] = [count(sa), count(sb)];
  const fisher = fisherExact(ca, cb);
  const shares = compareGroups(sa, sb, { seed: SEED });
  const returns = compareGroups(
    critic.map((r) => r.greedyReturn ?? 0),
    twosome.map((r) => r.greedyReturn ?? 0),
    { seed: SEED },
  );
  return [
    head,
    '',
    '| | POAD-critic | TWOSOME | POAD-critic − TWOSOME |',
    '|---|---|---|---|',
    `| seeds solved greedily (final greedy success ≥ ${100 * SOLVED_AT}%) — **primary** | ${ca.successes} of 30 | ${cb.successes} of 30 | share ${differenceText(shares, 3)}; Fisher's exact test p = ${fixed(fisher, 4)}${fisher < 0.05 ? ' **significant**' : ''} |`,
    `| final greedy return (mean over seeds) — secondary | ${meanText(
      critic.map((r) => r.greedyReturn),
      3,
    )} | ${meanText(
      twosome.map((r) => r.greedyReturn),
      3,
    )} | ${differenceText(returns, 3)}, p = ${fixed(returns.p, 4)}${returns.exact ? '' : ' (Monte Carlo)'} |`,
  ];
}

/** The `steps` of each iteration of a run's credit.jsonl ([] without one). */
function creditSteps(runDir: string): Record<string, unknown>[] {
  const file = join(runDir, 'credit.jsonl');
  if (!dataExists(file)) return [];
  return readText(file)
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { steps?: Record<string, unknown> }).steps ?? {});
}

/**
 * Exploratory (defined after the tuning's results were seen, not part of the protocol): how large
 * the error of a critic arm's advantage at the deciding token is against the spread of the exact
 * advantages it must order. Per iteration of a run's credit.jsonl: `spread`, the standard deviation
 * of A^π over the iteration's chosen actions, and `error`, the standard deviation of the advantage
 * at the deciding token minus A^π (a constant offset changes no ranking, so it is left out); each
 * the mean over iterations. Null: the run keeps no per-token values (an arm without a critic) or
 * no iteration has two steps.
 */
export function signalOfRun(runDir: string): { spread: number; error: number } | null {
  const spread: number[] = [];
  const error: number[] = [];
  for (const steps of creditSteps(runDir)) {
    const exact = steps?.exact as number[] | undefined;
    const deciding = steps?.decidingAdvantage as number[] | undefined;
    if (!steps?.value || !exact || !deciding || exact.length < 2) continue;
    spread.push(std(exact));
    error.push(std(exact.map((a, i) => deciding[i]! - a)));
  }
  return spread.length ? { spread: mean(spread), error: mean(error) } : null;
}

/** The exploratory table of {@link signalOfRun} over a tuning root or a part-2 root. */
export function signalTables(root: string): string[] {
  const cells = [
    ...TUNING_SETTINGS.map((x, i) => ({ dir: `setting-${i}`, label: `${i}: ${x.label}` })),
    ...CREDIT_ARMS.map((x) => ({ dir: x.arm, label: x.label })),
  ];
  const lines = [
    '| task | comparison | seeds | spread of A^π (sd over the chosen actions) | sd of the error of the advantage at the deciding token | error ÷ spread | accuracy |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const task of STUDY_TASKS) {
    for (const { dir, label } of cells) {
      const runs = finishedRuns(join(root, task, dir));
      const figures = runs.map(signalOfRun).filter((x) => x !== null);
      if (figures.length === 0) continue;
      const spread = mean(figures.map((f) => f.spread));
      const error = mean(figures.map((f) => f.error));
      const accuracy = numbers(runs.map((r) => runMean(r, 'creditAccuracyDecidingTied')));
      lines.push(
        `| ${task} | ${label} | ${figures.length} | ${fixed(spread, 4)} | ${fixed(error, 4)} | ${fixed(error / spread, 2)} | ${accuracy.length ? fixed(mean(accuracy), 3) : '–'} |`,
      );
    }
  }
  return lines;
}

/**
 * The standard deviation of the exact values over each iteration's token prefixes (credit.jsonl's
 * `steps.exactValue`), the mean over iterations: the scale a critic's RMSE is read against. Null:
 * the run keeps no exact values.
 */
export function exactValueSpread(runDir: string): number | null {
  const spreads: number[] = [];
  for (const steps of creditSteps(runDir)) {
    const rows = steps.exactValue as number[][] | undefined;
    const values = (rows ?? []).flat().filter((v) => Number.isFinite(v));
    if (values.length >= 2) spreads.push(std(values));
  }
  return spreads.length ? mean(spreads) : null;
}

/** ETPO's soft critic on the credit tasks (descriptive): ROOT/<task> holds its comparison. */
export function etpoTables(root: string): string[] {
  const sdText = (xs: readonly (number | null)[], digits: number) => {
    const ok = numbers(xs);
    if (ok.length === 0) return '–';
    return `${fixed(mean(ok), digits)} ± ${fixed(std(ok), digits)}`;
  };
  const lines = [
    '| task | seeds | soft critic RMSE | bias | ρ | sd of the exact soft values | RMSE ÷ sd | credit accuracy at the deciding token | seeds solved greedily |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const task of STUDY_TASKS) {
    const dirs = finishedRuns(join(root, task));
    if (dirs.length === 0) {
      lines.push(`| ${task} | 0 | not run yet | | | | | | |`);
      continue;
    }
    const runs = dirs.map((r) => studyRun(r, task));
    const spreads = dirs.map(exactValueSpread);
    const ratios = runs.map((r, i) =>
      r.rmse === null || spreads[i] === null ? null : r.rmse / spreads[i]!,
    );
    const solved = runs.filter((r) => (r.greedySuccess ?? 0) >= SOLVED_AT).length;
    lines.push(
      `| ${task} | ${runs.length} | ${sdText(
        runs.map((r) => r.rmse),
        3,
      )} | ${sdText(
        runs.map((r) => r.bias),
        3,
      )} | ${sdText(
        runs.map((r) => r.rho),
        2,
      )} | ${sdText(spreads, 3)} | ${sdText(ratios, 1)} | ${sdText(
        runs.map((r) => r.accuracy),
        3,
      )} | ${solved} of ${runs.length} |`,
    );
  }
  return lines;
}

const TABLES: Record<string, (root: string) => string[]> = {
  tuning: tuningTables,
  credit: creditTables,
  food: foodTables,
  signal: signalTables,
  etpo: etpoTables,
};

function main(argv: readonly string[]): number {
  const [what, root] = argv;
  if (what === 'settings') {
    process.stdout.write(`${TUNING_SETTINGS.map((x) => x.flags).join('\n')}\n`);
    return 0;
  }
  if (what === 'choose' && root) {
    const choice = chooseCritic(tuningCells(root));
    if (choice === null) {
      process.stderr.write(
        `POAD-critic is not chosen yet: the rule waits for all 16 settings × 3 tasks × 5 seeds in ${root}\n`,
      );
      return 3;
    }
    process.stdout.write(`${TUNING_SETTINGS[choice.chosen]!.flags}\n`);
    return 0;
  }
  const tables = what === undefined ? undefined : TABLES[what];
  if (tables && root) {
    process.stdout.write(`${tables(root).join('\n')}\n`);
    return 0;
  }
  process.stderr.write(
    'usage: node --import tsx apps/compare/scripts/critic-study-tables.ts tuning|credit|food|signal|etpo|choose ROOT | settings\n',
  );
  return 2;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  process.exitCode = main(process.argv.slice(2));
