// The tables of "POAD against the group-relative baselines" (docs/results.md) from the archived
// comparisons: per environment and method, the credit accuracy, the env steps to 90% sampled
// success and the seeds that got there; then the protocol's two primary families, each with
// Holm's step-down adjustment over its members:
//   1. credit accuracy, POAD − GRPO and POAD − GiGPO on the four credit tasks (8 tests);
//   2. env steps to 90% sampled success, POAD − GRPO and POAD − GiGPO on the four credit tasks
//      and food-preparation on both models (12 tests);
// and every other pair and measure with its raw p-value (exploratory). A family is computed only
// when all of its comparisons are in; otherwise the script says which are missing.
// Reads each comparison's summary.json (`npm run compare -- --resume DIR --report-only` writes
// it) from results/group-baselines/<env>/compare-*, a folder or its archive (compare-*.zip, read
// as it is: src/archive-file.ts). From the repository root:
//   node --import tsx apps/compare/scripts/group-baselines-tables.ts [folder] [--json FILE]
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { comparisonsIn, dataExists, readJson } from '../src/archive-file.js';
import {
  fixed,
  type GroupSummary,
  type PairDifference,
  type PairMetric,
  readRows,
  summariseRun,
} from '../src/report.js';
import { compareGroups, type Difference, holm } from '../src/stats.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonOut = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const positional = args.filter((a, i) => !a.startsWith('--') && (jsonAt < 0 || i !== jsonAt + 1));
const root = resolve(positional[0] ?? join(ROOT, 'results', 'group-baselines'));

const CREDIT = ['credit-key-token', 'credit-delayed', 'credit-loop', 'credit-risky'];
const FOOD = ['virtualhome-food-preparation', 'virtualhome-food-preparation-informative-prior'];
const ALL = [...CREDIT, ...FOOD, 'overcooked-tomato-salad'];
const METHODS = ['poad', 'twosome', 'ntpo', 'grpo', 'gigpo'];
const BASELINES = ['grpo', 'gigpo'];
/** The training task of each environment's runs (eval.json's key). */
const TASK: Record<string, string> = {
  'credit-key-token': 'key-token',
  'credit-delayed': 'delayed',
  'credit-loop': 'loop',
  'credit-risky': 'risky',
  'virtualhome-food-preparation': 'food-preparation',
  'virtualhome-food-preparation-informative-prior': 'food-preparation',
  'overcooked-tomato-salad': 'tomato-salad',
};

interface Summary {
  summaries: GroupSummary[];
  differences: PairDifference[];
}

/**
 * The archived comparison of an environment (its folder or archive: the path its runs are joined
 * onto), or null when it is not archived yet.
 */
function folderOf(env: string): string | null {
  const dir = join(root, env);
  if (!existsSync(dir)) return null;
  const found = comparisonsIn(dir).filter(
    (c) => c.name.startsWith('compare-') && dataExists(join(c.root, 'summary.json')),
  );
  return found.at(-1)?.root ?? null;
}

/** The summary.json of an environment's comparison, or null when it is not archived yet. */
function load(env: string): Summary | null {
  const dir = folderOf(env);
  return dir ? readJson<Summary>(join(dir, 'summary.json')) : null;
}

const loaded = new Map(ALL.map((env) => [env, load(env)]));

/** The pair poad − `other` of an environment on one measure, oriented as POAD − other. */
function pair(env: string, other: string, metric: PairMetric) {
  const s = loaded.get(env);
  const d = s?.differences.find(
    (p) => (p.a === 'poad' && p.b === other) || (p.a === other && p.b === 'poad'),
  );
  const m = d?.metrics[metric];
  if (!d || !m) return null;
  const sign = d.a === 'poad' ? 1 : -1;
  const [low, high] = sign === 1 ? [m.low, m.high] : [-m.high, -m.low];
  return { diff: sign * m.diff, low, high, p: m.p, exact: m.exact };
}

const digits: Partial<Record<PairMetric, number>> = { creditAccuracy: 3, stepsTo90Sampled: 0 };
const title: Partial<Record<PairMetric, string>> = {
  creditAccuracy: 'credit accuracy',
  stepsTo90Sampled: 'env steps to 90% sampled success',
};

interface FamilyRow {
  env: string;
  other: string;
  diff: number;
  low: number;
  high: number;
  p: number;
  exact: boolean;
  /** False when the test could not be computed (counted as p = 1). */
  defined: boolean;
  holm: number;
}

function family(metric: PairMetric, envs: readonly string[]): FamilyRow[] | string[] {
  const missing = envs.filter((e) => !loaded.get(e));
  if (missing.length) return missing;
  // A test that cannot be computed (a baseline whose runs never had a credit accuracy: its
  // advantages never ranked its actions) stays in the family as p = 1, so the family keeps the
  // protocol's size and no other member's threshold is eased.
  const rows = envs.flatMap((env) =>
    BASELINES.map((other) => {
      const d = pair(env, other, metric);
      return d
        ? { env, other, ...d, defined: true, holm: Number.NaN }
        : {
            env,
            other,
            diff: Number.NaN,
            low: Number.NaN,
            high: Number.NaN,
            p: 1,
            exact: true,
            defined: false,
            holm: Number.NaN,
          };
    }),
  );
  const adjusted = holm(rows.map((r) => r.p));
  for (const [i, r] of rows.entries()) r.holm = adjusted[i]!;
  return rows;
}

const out: string[] = [];
const json: Record<string, unknown> = {};

// Per environment and method: the measures' means over seeds.
out.push(
  '| environment | method | seeds | credit accuracy | env steps to 90% sampled success (mean, never-reached runs at their total) | seeds at 90% | iterations to 90% (mean of the runs that got there) | env steps per iteration (mean) | final greedy success |',
  '|---|---|---|---|---|---|---|---|---|',
);
for (const env of ALL) {
  const s = loaded.get(env);
  if (!s) {
    out.push(`| ${env} | not yet in | | | | | | | |`);
    continue;
  }
  for (const label of METHODS) {
    const g = s.summaries.find((x) => x.label === label);
    if (!g) continue;
    const steps = g.runs.map((r) => r.sampledSuccessAt[1] ?? r.envSteps);
    const reached = g.runs.filter((r) => r.sampledSuccessAt[1] !== null).length;
    const mean = steps.reduce((a, b) => a + b, 0) / steps.length;
    const credit = g.creditAccuracy
      ? `${fixed(g.creditAccuracy[0], 3)} ± ${fixed(g.creditAccuracy[1], 3)}`
      : '–';
    // The measure counts env steps; an iteration's size differs between the methods' presets,
    // so the iterations (updates) it took are shown beside it.
    const rowsOf = g.runs.map((r) => readRows(join(folderOf(env)!, r.name)));
    const perIteration =
      rowsOf.reduce((a, rows) => a + (rows.at(-1)!.envSteps as number) / rows.length, 0) /
      rowsOf.length;
    const iterations = g.runs.flatMap((r, i) =>
      r.sampledSuccessAt[1] === null
        ? []
        : [rowsOf[i]!.findIndex((x) => x.envSteps === r.sampledSuccessAt[1]) + 1],
    );
    const meanIterations = iterations.length
      ? fixed(iterations.reduce((a, b) => a + b, 0) / iterations.length, 1)
      : '–';
    out.push(
      `| ${env} | ${label} | ${g.seeds} | ${credit} | ${Math.round(mean).toLocaleString('en-US')} | ${reached}/${g.seeds} | ${meanIterations} | ${Math.round(perIteration)} | ${fixed(100 * g.finalSuccess[0], 0)}% |`,
    );
  }
}

const families: [string, PairMetric, readonly string[]][] = [
  ['Family 1: credit accuracy (8 tests)', 'creditAccuracy', CREDIT],
  [
    'Family 2: env steps to 90% sampled success (12 tests)',
    'stepsTo90Sampled',
    [...CREDIT, ...FOOD],
  ],
];
for (const [name, metric, envs] of families) {
  out.push('', `${name}, POAD − baseline:`, '');
  const rows = family(metric, envs);
  if (typeof rows[0] === 'string') {
    out.push(`Not computed: ${(rows as string[]).join(', ')} not archived yet.`);
    json[metric] = { missing: rows };
    continue;
  }
  const fr = rows as FamilyRow[];
  json[metric] = fr;
  const d = digits[metric]!;
  out.push(
    `| environment | POAD − | ${title[metric]} [95% interval] | p | Holm | significant after Holm |`,
    '|---|---|---|---|---|---|',
    ...fr.map((r) =>
      r.defined
        ? `| ${r.env} | ${r.other} | ${fixed(r.diff, d)} [${fixed(r.low, d)}, ${fixed(r.high, d)}] | ${fixed(r.p, 4)}${r.exact ? '' : ' (Monte Carlo)'} | ${fixed(r.holm, 4)} | ${r.holm < 0.05 ? 'yes' : 'no'} |`
        : `| ${r.env} | ${r.other} | undefined: no run of ${r.other} had a value | 1 (counted) | ${fixed(r.holm, 4)} | no |`,
    ),
  );
}

// Not pre-registered: the speed measure with the episodes a group rollout cut counted as not
// successful. The runs above were made before group rollouts reported their cut episodes, so a
// GRPO or GiGPO run's sampled success in their summaries was over the episodes that ended within
// the rollout's step limit only. `readRows` re-counts such a run's rows over every episode played
// (successRate × episodes / (groups × group-size), config.json), and `summariseRun` reads them.
// POAD's, TWOSOME's and NTPO's rollouts cut no episode (an episode goes on into the next
// iteration), so their runs are as above.
/** Env steps to 90% sampled success of a group run, its cut episodes counted as failures. */
function groupStepsTo90(
  runDir: string,
  task: string,
): { at: number | null; total: number; cut: number } {
  const run = summariseRun(runDir, task);
  if (!run.successRecounted)
    throw new Error(`${runDir}: not a group run made before cut episodes were counted`);
  // Re-counted rows carry both: the episodes that ended and those cut.
  const rows = readRows(runDir);
  const cut = rows.reduce((a, r) => a + r.episodesCut!, 0);
  const played = rows.reduce((a, r) => a + r.episodes! + r.episodesCut!, 0);
  return { at: run.sampledSuccessAt[1], total: run.envSteps, cut: cut / played };
}

const recount: Record<string, unknown>[] = [];
out.push(
  '',
  "Not pre-registered: env steps to 90% sampled success with a group run's cut episodes counted as not successful, POAD − baseline (the same test; Holm over the same 12 members):",
  '',
  '| environment | POAD − | episodes cut (mean over runs) | seeds at 90% | env steps to 90% sampled success [95% interval] | p | Holm |',
  '|---|---|---|---|---|---|---|',
);
{
  const rows: { env: string; other: string; cut: number; reached: string; d: Difference }[] = [];
  // The 12 members of family 2, then tomato-salad (exploratory: no Holm).
  const envs = [...CREDIT, ...FOOD, 'overcooked-tomato-salad'];
  if (envs.every((e) => loaded.get(e))) {
    for (const env of envs) {
      const dir = folderOf(env)!;
      const poad = loaded
        .get(env)!
        .summaries.find((g) => g.label === 'poad')!
        .runs.map((r) => r.sampledSuccessAt[1] ?? r.envSteps);
      for (const other of BASELINES) {
        // In the summary's order of runs, so the bootstrap draws them as the report's test did.
        const runs = loaded
          .get(env)!
          .summaries.find((g) => g.label === other)!
          .runs.map((r) => groupStepsTo90(join(dir, r.name), TASK[env]!));
        const steps = runs.map((r) => r.at ?? r.total);
        rows.push({
          env,
          other,
          cut: runs.reduce((a, r) => a + r.cut, 0) / runs.length,
          reached: `${runs.filter((r) => r.at !== null).length}/${runs.length}`,
          d: compareGroups(poad, steps, { seed: 12_345 }),
        });
      }
    }
    const adjusted = holm(rows.slice(0, 12).map((r) => r.d.p));
    for (const [i, r] of rows.entries()) {
      const h = adjusted[i];
      out.push(
        `| ${r.env} | ${r.other} | ${fixed(100 * r.cut, 0)}% | ${r.reached} | ${fixed(r.d.diff, 0)} [${fixed(r.d.low, 0)}, ${fixed(r.d.high, 0)}] | ${fixed(r.d.p, 4)}${r.d.exact ? '' : ' (Monte Carlo)'} | ${h === undefined ? 'exploratory' : fixed(h, 4)} |`,
      );
      recount.push({
        env: r.env,
        other: r.other,
        cut: r.cut,
        reached: r.reached,
        ...r.d,
        holm: h ?? null,
      });
    }
    json.stepsTo90SampledCutCounted = recount;
  } else out.push('Not computed: not every comparison is archived yet.');
}

// Exploratory: every other pair and measure of every environment, raw p-values.
out.push('', 'Exploratory (raw p-values, not adjusted across environments):', '');
out.push(
  '| environment | A − B | measure | difference [95% interval] | p |',
  '|---|---|---|---|---|',
);
for (const env of ALL) {
  const s = loaded.get(env);
  if (!s) continue;
  for (const p of s.differences)
    for (const [metric, m] of Object.entries(p.metrics)) {
      if (!m) continue;
      const primary =
        p.a === 'poad' &&
        BASELINES.includes(p.b) &&
        ((metric === 'creditAccuracy' && CREDIT.includes(env)) ||
          (metric === 'stepsTo90Sampled' && [...CREDIT, ...FOOD].includes(env)));
      if (primary) continue;
      const d = metric === 'stepsTo90Sampled' ? 0 : metric === 'greedySuccess' ? 2 : 3;
      out.push(
        `| ${env} | ${p.a} − ${p.b} | ${metric} | ${fixed(m.diff, d)} [${fixed(m.low, d)}, ${fixed(m.high, d)}] | ${fixed(m.p, 3)}${m.exact ? '' : ' (Monte Carlo)'} |`,
      );
    }
}

process.stdout.write(`${out.join('\n')}\n`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(json, null, 2)}\n`);
