// The DataSciCoding evaluation in one table: for each dataset and algorithm, the programs' mean
// reward over the first and last 5 iterations (mean ± std over seeds), the last 5 against the
// prior (all programs, and first attempts alone), the seeds at least 0.03 above the prior, the
// share that ran and the best reward; then, per algorithm, the datasets where the protocol's
// target is met (mean over seeds ≥ prior + 0.03, and the share that ran above the prior's).
// A second table shows how the programs changed, from each run's programs.jsonl and
// metrics.jsonl: first 5 → last 5 iterations of the mean program length in tokens (the text
// re-encoded with the code model's tokenizer; sampled ids are not stored) with the programs at
// 190 tokens or more, the distinct programs, the kinds of estimator (chosenEstimator of @poad/train-datascicoding, as the
// prior's report counts them) and the share of the most frequent kind, and the mean token
// entropy (each a mean over seeds).
// Reads the summary.json that `npm run compare -- --resume DIR --report-only --prior FILE` writes,
// from every compare-* comparison of a dataset, its folder or its archive (compare-*.zip, read as
// it is: src/archive-file.ts); settings run with --extra are labelled with it.
// From the repository root, after `npm run build`:
//   node --import tsx apps/compare/scripts/datascicoding-eval-tables.ts [folder holding <dataset>/compare-*/]
// (default: results/datascicoding-eval).
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCodeModelPath } from '@poad/default-model';
import { loadTokenizer } from '@poad/hf-files';
import { chosenEstimator } from '@poad/train-datascicoding/programs';
import { comparisonsIn, dataExists, listData, readJson } from '../src/archive-file.js';
import type { PriorReference } from '../src/prior.js';
import { fixed, PRIOR_MARGIN, type ProgramSummary } from '../src/report.js';
import { type Program, readJsonl } from './programs.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const root = resolve(process.argv[2] ?? join(ROOT, 'results', 'datascicoding-eval'));

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const std = (xs: readonly number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
const ms = (xs: readonly number[], d = 3) => `${fixed(mean(xs), d)} ± ${std(xs).toFixed(d)}`;
const signed = (xs: readonly number[], d = 3) => `${mean(xs) >= 0 ? '+' : ''}${ms(xs, d)}`;
const pct = (xs: readonly number[]) => `${(100 * mean(xs)).toFixed(0)}%`;
const share = (x: number) => `${(100 * x).toFixed(0)}%`;

interface Summary {
  programs: ProgramSummary[];
  prior?: PriorReference;
}
interface MetricsRow {
  iteration: number;
  entropy: number;
}

const tok = await loadTokenizer(defaultCodeModelPath);
const met: Record<string, { dataset: string; ok: boolean }[]> = {};
const changes: { dataset: string; label: string; dir: string; seeds: string[] }[] = [];
console.log(
  '| dataset (prior: mean reward ± s.e., ran) | algorithm | seeds | mean reward, first 5 → last 5 | last 5 − prior | seeds ≥ prior + 0.03 | first attempts, last 5 − prior | ran, first 5 → last 5 | best reward |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
// A dataset's folder may hold several comparisons (digits: POAD's, and NTPO's and ETPO's at
// --timeout 90); a comparison run with --extra labels its settings with it, as --combine does.
const extraOf = (dir: string): string => {
  const { argv } = readJson<{ argv: string[] }>(join(dir, 'compare.json'));
  const i = argv.findIndex((a) => a === '--extra' || a.startsWith('--extra='));
  if (i < 0) return '';
  return (argv[i] === '--extra' ? argv[i + 1]! : argv[i]!.slice('--extra='.length)).trim();
};
const datasets = readdirSync(root).filter(
  (d) => !d.includes('.') && statSync(join(root, d)).isDirectory(),
);
for (const ds of datasets) {
  const dir = join(root, ds);
  const compares = comparisonsIn(dir).filter(
    (c) => c.name.startsWith('compare-') && dataExists(join(c.root, 'summary.json')),
  );
  for (const { root: compare } of compares) {
    const s = readJson<Summary>(join(compare, 'summary.json'));
    const prior = s.prior;
    if (!prior)
      throw new Error(`${ds}: summary.json has no prior; rewrite the report with --prior`);
    const extra = extraOf(compare);
    // --csv FILE --target COLUMN say which dataset it is, not how it is trained
    const shown = extra
      .replace(/--(csv|target)(=|\s+)\S+/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    const head = `${prior.dataset} (${prior.meanReward.toFixed(3)} ± ${(prior.meanRewardSe ?? Number.NaN).toFixed(3)}, ${(100 * prior.ran).toFixed(0)}%)`;
    for (const p of s.programs) {
      const label = shown ? `${p.label} ${shown}` : p.label;
      const seeds = p.perSeed;
      const d = seeds.map((x) => x.finalReward - prior.meanReward);
      const first = seeds.every((x) => x.firstAttempts)
        ? signed(seeds.map((x) => x.firstAttempts!.finalReward - prior.meanReward))
        : '–';
      const above = d.filter((x) => x >= PRIOR_MARGIN).length;
      console.log(
        `| ${head} | ${label} | ${seeds.length} | ${ms(seeds.map((x) => x.startReward))} → ${ms(seeds.map((x) => x.finalReward))} | ${signed(d)} | ${above}/${seeds.length} | ${first} | ${pct(seeds.map((x) => x.startRun))} → ${pct(seeds.map((x) => x.finalRun))} | ${ms(
          seeds.map((x) => x.best),
          4,
        )} |`,
      );
      changes.push({
        dataset: prior.dataset,
        label,
        dir: compare,
        seeds: listData(compare)
          .filter((r) => r.startsWith(`${p.label}-s`))
          .sort(),
      });
      const ok = mean(d) >= PRIOR_MARGIN && mean(seeds.map((x) => x.finalRun)) > prior.ran;
      met[p.label] ??= [];
      met[p.label]!.push({ dataset: shown ? `${prior.dataset} (${shown})` : prior.dataset, ok });
    }
  }
}
console.log('');
for (const [algo, list] of Object.entries(met)) {
  const n = list.filter((x) => x.ok).length;
  const each = list.map((x) => `${x.dataset} ${x.ok ? 'met' : 'not met'}`).join(', ');
  console.log(`- ${algo}: target met on ${n} of ${list.length} datasets (${each})`);
}

/** What the programs of some iterations of a run were like. */
interface Part {
  tokens: number;
  long: number;
  distinct: number;
  programs: number;
  kinds: number;
  top: number;
  topName: string;
  entropy: number;
}

const partOf = async (
  allRows: readonly MetricsRow[],
  allPrograms: readonly Program[],
  iterations: readonly number[],
): Promise<Part> => {
  const ii = new Set(iterations);
  const rows = allRows.filter((r) => ii.has(r.iteration));
  const programs = allPrograms.filter((x) => ii.has(x.iteration));
  const n = await Promise.all(programs.map(async (x) => (await tok.encode(x.body)).length));
  const kinds = new Map<string, number>();
  for (const x of programs) {
    const kind = chosenEstimator(x.body);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const top = [...kinds].sort((a, b) => b[1] - a[1])[0]!;
  return {
    tokens: mean(n),
    long: n.filter((x) => x >= 190).length / n.length,
    distinct: new Set(programs.map((x) => x.body)).size,
    programs: programs.length,
    kinds: kinds.size,
    top: top[1] / programs.length,
    topName: top[0],
    entropy: mean(rows.map((r) => r.entropy)),
  };
};

// How the programs changed: per run, its first and its last 5 iterations.
const partsOf = async (run: string) => {
  const rows = readJsonl<MetricsRow>(join(run, 'metrics.jsonl'));
  const all = readJsonl<Program>(join(run, 'programs.jsonl'));
  const its = rows.map((r) => r.iteration);
  return {
    first: await partOf(rows, all, its.slice(0, 5)),
    last: await partOf(rows, all, its.slice(-5)),
  };
};
console.log('');
console.log(
  '| dataset | algorithm | program tokens (share ≥ 190) | distinct programs | kinds of estimator | most frequent kind (last 5, each seed) | token entropy |',
);
console.log('|---|---|---|---|---|---|---|');
for (const c of changes) {
  const parts: { first: Part[]; last: Part[] } = { first: [], last: [] };
  for (const run of c.seeds) {
    if (!dataExists(join(c.dir, run, 'programs.jsonl'))) continue;
    const { first, last } = await partsOf(join(c.dir, run));
    parts.first.push(first);
    parts.last.push(last);
  }
  if (parts.first.length === 0) continue;
  const m = (which: 'first' | 'last', k: 'tokens' | 'long' | 'distinct' | 'programs' | 'kinds') =>
    mean(parts[which].map((x) => x[k]));
  const cell = (k: 'distinct' | 'kinds' | 'entropy', f: (x: number) => string) =>
    `${f(mean(parts.first.map((x) => x[k])))} → ${f(mean(parts.last.map((x) => x[k])))}`;
  console.log(
    `| ${c.dataset} | ${c.label} | ${m('first', 'tokens').toFixed(0)} (${share(m('first', 'long'))}) → ${m('last', 'tokens').toFixed(0)} (${share(m('last', 'long'))}) | ${cell('distinct', (x) => x.toFixed(0))} (of ${m('last', 'programs').toFixed(0)}) | ${cell('kinds', (x) => x.toFixed(1))} | ${parts.last.map((x) => `${x.topName} ${share(x.top)}`).join(', ')} | ${cell('entropy', (x) => x.toFixed(2))} |`,
  );
}
