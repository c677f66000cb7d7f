// The tables of "The critic that BAD needs" (docs/results.md), each computed as its protocol says,
// from the comparisons of the study (folders or archives):
//   tuning ROOT      part 1: ROOT/<task>/setting-<i>/ holds the comparison of setting i on task t
//                    (key-token, delayed, loop; seeds 101–105); per setting and task the mean over
//                    seeds of the credit accuracy at the deciding token (creditAccuracyDecidingTied,
//                    each run's mean over its iterations) and of the critic's V^π RMSE, the
//                    eligibility rule (RMSE no worse than setting 0's on every task) and the choice
//                    of POAD-critic; settings not finished yet are listed as such.
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
import { fixed } from '../src/report.js';

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
}

/** The tuning's cells, by setting number and task. */
export function tuningCells(root: string): TuningCell[][] {
  return TUNING_SETTINGS.map((_, i) =>
    STUDY_TASKS.map((task) => {
      const runs = finishedRuns(join(root, task, `setting-${i}`));
      const acc = runs.map((r) => runMean(r, 'creditAccuracyDecidingTied'));
      const rmse = runs.map((r) => runMean(r, 'criticRmse'));
      const ok = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);
      return {
        seeds: runs.length,
        accuracy: ok(acc).length ? mean(ok(acc)) : null,
        rmse: ok(rmse).length ? mean(ok(rmse)) : null,
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
  lines.push(
    '',
    choice === null
      ? 'POAD-critic: not chosen yet (the rule waits for all 16 settings × 3 tasks × 5 seeds).'
      : `Eligible (RMSE no worse than today's on every task): ${choice.eligible.join(', ')}. POAD-critic: setting ${choice.chosen}, ${TUNING_SETTINGS[choice.chosen]!.label} (\`${TUNING_SETTINGS[choice.chosen]!.flags || 'no flags'}\`).`,
  );
  return lines;
}

function main(argv: readonly string[]): number {
  const [what, root] = argv;
  if (what === 'tuning' && root) {
    process.stdout.write(`${tuningTables(root).join('\n')}\n`);
    return 0;
  }
  process.stderr.write(
    'usage: node --import tsx apps/compare/scripts/critic-study-tables.ts tuning ROOT\n',
  );
  return 2;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  process.exitCode = main(process.argv.slice(2));
