// Timeouts of the digits prior by kind of program: the reference sample (prior-256.json, the
// machine of the evaluation's other runs, 30 s) against samples on a slower machine at 30, 60
// and 90 s (timeouts/digits-256-t*.json). From the repository root:
//   node --import tsx apps/compare/scripts/datascicoding-timeouts.ts [folder holding prior-256.json and timeouts/]
// (default: results/datascicoding-prior). A FILE.json is read from FILE.json.gz too, as results/
// keeps the large ones.

import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJson } from '../src/archive-file.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dir = resolve(process.argv[2] ?? join(ROOT, 'results', 'datascicoding-prior'));

/** The part of a prior file (`npm run prior -w @poad/train-datascicoding`) read here. */
interface PriorFile {
  programs: Record<string, { body: string; reason?: string }[]>;
  summaries: { dataset: string; meanReward: number; ran: number }[];
}

const files: [string, string][] = [
  ['reference machine, 30 s', join(dir, 'prior-256.json')],
  ['slower machine, 30 s', join(dir, 'timeouts', 'digits-256-t30.json')],
  ['slower machine, 60 s', join(dir, 'timeouts', 'digits-256-t60.json')],
  ['slower machine, 90 s', join(dir, 'timeouts', 'digits-256-t90.json')],
];
const kinds: Record<string, (body: string) => boolean> = {
  'Bagging of LogisticRegression': (b) =>
    b.includes('BaggingClassifier(') && b.includes('LogisticRegression'),
  'with HistGradientBoosting': (b) => b.includes('HistGradientBoostingClassifier('),
  'with GradientBoosting': (b) =>
    b.replaceAll('HistGradientBoostingClassifier(', '').includes('GradientBoostingClassifier('),
};
const rate = (ps: readonly { reason?: string }[]) =>
  `${ps.filter((p) => p.reason === 'timeout').length}/${ps.length}`;
console.log(`| sample | timeouts, all | ${Object.keys(kinds).join(' | ')} | mean reward | ran |`);
console.log(
  `|---|---|${Object.keys(kinds)
    .map(() => '---|')
    .join('')}---|---|`,
);
for (const [name, file] of files) {
  const json = readJson<PriorFile>(file);
  const ps = json.programs.digits ?? [];
  const s = json.summaries.find((x) => x.dataset === 'digits');
  if (!s) throw new Error(`${file}: no digits summary`);
  const cells = Object.values(kinds).map((f) => rate(ps.filter((p) => f(p.body))));
  console.log(
    `| ${name} | ${rate(ps)} | ${cells.join(' | ')} | ${s.meanReward.toFixed(3)} | ${(100 * s.ran).toFixed(0)}% |`,
  );
}
