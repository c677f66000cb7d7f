// The follow-up "credit accuracy at the deciding token" of docs/results.md: POAD trained again on
// the credit tasks (seeds 1–10), each run checked to repeat its archived run of
// results/group-baselines/credit-<task>/ (every metrics value but wall-clock times and the new
// column), then its credit accuracy at the deciding token compared with its first-token value
// (paired by seed: exact sign-flip test) and with TWOSOME's, GRPO's and GiGPO's archived credit
// accuracy (the report's test; for them both measures are one number). Raw p-values.
// From the repository root, with one new comparison folder per task:
//   node --import tsx apps/compare/scripts/deciding-token-tables.ts key-token=DIR delayed=DIR loop=DIR
// (each DIR a comparison folder or its archive, DIR.zip, read as it is: src/archive-file.ts)
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  comparisonsIn,
  dataExists,
  listData,
  openComparison,
  readJson,
  readText,
} from '../src/archive-file.js';
import { differenceText, fixed, type GroupSummary, summariseRun } from '../src/report.js';
import { compareGroups } from '../src/stats.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const archive = (task: string) => {
  const dir = join(ROOT, 'results', 'group-baselines', `credit-${task}`);
  const found = comparisonsIn(dir).filter((c) => c.name.startsWith('compare-'));
  return found.at(-1)!.root;
};

/** Metrics keys that hold wall-clock times or rates, which two runs of one seed need not share. */
const timing = (k: string) => /Seconds$|PerSec$/.test(k);

/** Values of two runs' metrics rows that differ, wall-clock times and the new column aside. */
function differences(a: string, b: string): string[] {
  const rows = (d: string) =>
    readText(join(d, 'metrics.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const [ra, rb] = [rows(a), rows(b)];
  const out: string[] = [];
  if (ra.length !== rb.length) out.push(`${ra.length} rows against ${rb.length}`);
  for (let i = 0; i < Math.min(ra.length, rb.length); i++)
    for (const k of new Set([...Object.keys(ra[i]!), ...Object.keys(rb[i]!)])) {
      if (timing(k) || k === 'creditAccuracyDeciding') continue;
      if (JSON.stringify(ra[i]![k]) !== JSON.stringify(rb[i]![k]))
        out.push(`row ${i + 1} ${k}: ${String(ra[i]![k])} against ${String(rb[i]![k])}`);
    }
  const evals = (d: string) =>
    JSON.stringify(readJson<{ results: unknown }>(join(d, 'eval.json')).results);
  if (dataExists(join(a, 'eval.json')) && evals(a) !== evals(b)) out.push('eval.json differs');
  return out;
}

/** Exact two-sided sign-flip test of paired differences' mean (every one of the 2^n sign sets). */
function signFlip(d: readonly number[]): number {
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  const n = d.length;
  let extreme = 0;
  for (let m = 0; m < 2 ** n; m++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += (m >> i) & 1 ? -d[i]! : d[i]!;
    if (Math.abs(s) >= observed - 1e-12) extreme++;
  }
  return extreme / 2 ** n;
}

const out: string[] = [
  '| task | runs that repeat the archived run | POAD, first token | POAD, deciding token | deciding − first (paired) [range], p | POAD deciding − TWOSOME, p | − GRPO, p | − GiGPO, p |',
  '|---|---|---|---|---|---|---|---|',
];
for (const arg of process.argv.slice(2)) {
  const [task, given] = arg.split('=') as [string, string];
  const dir = openComparison(given, task).root;
  const old = archive(task);
  const summary = readJson<{ summaries: GroupSummary[] }>(join(old, 'summary.json'));
  const names = listData(dir)
    .filter((d) => /^poad-s\d+$/.test(d))
    .sort((a, b) => Number(a.slice(6)) - Number(b.slice(6)));
  const repeated = names.filter((n) => {
    const diff = differences(join(dir, n), join(old, n));
    if (diff.length) process.stderr.write(`${task} ${n}: ${diff.slice(0, 5).join('; ')}\n`);
    return diff.length === 0;
  });
  const runs = names.map((n) => summariseRun(join(dir, n), task));
  const first = runs.map((r) => r.creditAccuracy!);
  const deciding = runs.map((r) => r.creditAccuracyDeciding!);
  const paired = deciding.map((x, i) => x - first[i]!);
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = (xs: readonly number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
  const against = (label: string) => {
    const other = summary.summaries
      .find((g) => g.label === label)!
      .runs.map((r) => r.creditAccuracy)
      .filter((x): x is number => x !== null);
    const d = compareGroups(deciding, other, { seed: 12_345 });
    return `${differenceText(d, 3)}, ${fixed(d.p, 4)}`;
  };
  out.push(
    `| ${task} | ${repeated.length}/${names.length} | ${fixed(mean(first), 3)} ± ${fixed(std(first), 3)} | ${fixed(mean(deciding), 3)} ± ${fixed(std(deciding), 3)} | ${fixed(mean(paired), 3)} [${fixed(Math.min(...paired), 3)}, ${fixed(Math.max(...paired), 3)}], ${fixed(signFlip(paired), 4)} | ${against('twosome')} | ${against('grpo')} | ${against('gigpo')} |`,
  );
}
process.stdout.write(`${out.join('\n')}\n`);
