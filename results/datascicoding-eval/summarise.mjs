// The DataSciCoding evaluation in one table: for each dataset and algorithm, the programs' mean
// reward over the first and last 5 iterations (mean ± std over seeds), the last 5 against the
// prior (all programs, and first attempts alone), the seeds at least 0.03 above the prior, the
// share that ran and the best reward; then, per algorithm, the datasets where the protocol's
// target is met (mean over seeds ≥ prior + 0.03, and the share that ran above the prior's).
// Reads the summary.json that `npm run compare -- --resume DIR --report-only --prior FILE` writes.
// Usage: node results/datascicoding-eval/summarise.mjs [folder holding <dataset>/compare-*/]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? new URL('.', import.meta.url).pathname;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const std = (xs) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
const ms = (xs, d = 3) => `${mean(xs).toFixed(d)} ± ${std(xs).toFixed(d)}`;
const signed = (xs, d = 3) => {
  const m = mean(xs);
  return `${m >= 0 ? '+' : '−'}${Math.abs(m).toFixed(d)} ± ${std(xs).toFixed(d)}`;
};
const pct = (xs) => `${(100 * mean(xs)).toFixed(0)}%`;

const met = {};
console.log(
  '| dataset (prior: mean reward ± s.e., ran) | algorithm | seeds | mean reward, first 5 → last 5 | last 5 − prior | seeds ≥ prior + 0.03 | first attempts, last 5 − prior | ran, first 5 → last 5 | best reward |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const ds of readdirSync(root).filter((d) => existsSync(join(root, d)) && !d.includes('.'))) {
  const dir = join(root, ds);
  const compare = readdirSync(dir).find((d) => d.startsWith('compare-'));
  if (!compare || !existsSync(join(dir, compare, 'summary.json'))) continue;
  const s = JSON.parse(readFileSync(join(dir, compare, 'summary.json'), 'utf8'));
  const prior = s.prior;
  if (!prior) throw new Error(`${ds}: summary.json has no prior; rewrite the report with --prior`);
  const head = `${prior.dataset} (${prior.meanReward.toFixed(3)} ± ${prior.meanRewardSe.toFixed(3)}, ${(100 * prior.ran).toFixed(0)}%)`;
  for (const p of s.programs) {
    const seeds = p.perSeed;
    const d = seeds.map((x) => x.finalReward - prior.meanReward);
    const first = seeds.every((x) => x.firstAttempts)
      ? signed(seeds.map((x) => x.firstAttempts.finalReward - prior.meanReward))
      : '–';
    const above = d.filter((x) => x >= 0.03).length;
    console.log(
      `| ${head} | ${p.label} | ${seeds.length} | ${ms(seeds.map((x) => x.startReward))} → ${ms(seeds.map((x) => x.finalReward))} | ${signed(d)} | ${above}/${seeds.length} | ${first} | ${pct(seeds.map((x) => x.startRun))} → ${pct(seeds.map((x) => x.finalRun))} | ${ms(seeds.map((x) => x.best), 4)} |`,
    );
    const ok = mean(d) >= 0.03 && mean(seeds.map((x) => x.finalRun)) > prior.ran;
    (met[p.label] ??= []).push(`${prior.dataset} ${ok ? 'met' : 'not met'}`);
  }
}
console.log('');
for (const [algo, list] of Object.entries(met)) {
  const n = list.filter((x) => x.endsWith(' met') && !x.endsWith('not met')).length;
  console.log(`- ${algo}: target met on ${n} of ${list.length} datasets (${list.join(', ')})`);
}
