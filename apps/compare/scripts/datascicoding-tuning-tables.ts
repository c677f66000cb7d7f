// The learning-rate tuning of DataSciCoding on iris: for each lr and algorithm, the first and
// last 5 iterations' mean reward, share of programs that ran, mean program length in tokens (the
// program text re-encoded with the code model's tokenizer; sampled ids are not stored) and how
// many programs reached the 192-token limit, and the mean token entropy.
// From the repository root, after `npm run build`:
//   node --import tsx apps/compare/scripts/datascicoding-tuning-tables.ts [folder holding lr-*/compare-*]
// (each comparison its folder or its archive, compare-*.zip, read as it is: src/archive-file.ts)
// (default: results/datascicoding-tuning).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCodeModelPath } from '@poad/default-model';
import { loadTokenizer } from '@poad/hf-files';
import { comparisonsIn } from '../src/archive-file.js';
import { type Program, readJsonl } from './programs.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const here = resolve(process.argv[2] ?? join(ROOT, 'results', 'datascicoding-tuning'));
const tok = await loadTokenizer(defaultCodeModelPath);
const mean = (a: readonly number[]) => a.reduce((x, y) => x + y, 0) / a.length;

interface MetricsRow {
  iteration: number;
  meanReward: number;
  entropy: number;
}

console.log(
  '| lr (critic) | algorithm | mean reward | share that ran | program tokens (≥ 190) | token entropy |',
);
console.log('|---|---|---|---|---|---|');
for (const lr of ['3e-4', '1e-3', '3e-3']) {
  const dir = join(here, `lr-${lr}`);
  if (!existsSync(dir)) continue;
  const compare = comparisonsIn(dir).find((c) => c.name.startsWith('compare-'));
  if (compare === undefined) continue;
  for (const algo of ['poad', 'ntpo']) {
    const run = join(compare.root, `${algo}-s101`);
    const rows = readJsonl<MetricsRow>(join(run, 'metrics.jsonl'));
    const programs = readJsonl<Program>(join(run, 'programs.jsonl'));
    const its = rows.map((r) => r.iteration);
    const part = async (ii: readonly number[]) => {
      const r = rows.filter((x) => ii.includes(x.iteration));
      const p = programs.filter((x) => ii.includes(x.iteration));
      const n = await Promise.all(p.map(async (x) => (await tok.encode(x.body)).length));
      return {
        reward: mean(r.map((x) => x.meanReward)).toFixed(3),
        ran: `${(100 * mean(p.map((x) => (x.ran ? 1 : 0)))).toFixed(0)}%`,
        tokens: `${mean(n).toFixed(0)} (${n.filter((x) => x >= 190).length}/${n.length})`,
        entropy: mean(r.map((x) => x.entropy)).toFixed(2),
      };
    };
    const [a, b] = [await part(its.slice(0, 5)), await part(its.slice(-5))];
    const cell = (k: keyof typeof a) => `${a[k]} → ${b[k]}`;
    const clr = Number(lr) * 3;
    console.log(
      `| ${lr} (${clr.toExponential(0).replace('+', '')}) | ${algo.toUpperCase()} | ${cell('reward')} | ${cell('ran')} | ${cell('tokens')} | ${cell('entropy')} |`,
    );
  }
}
