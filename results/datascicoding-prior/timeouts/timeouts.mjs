// Timeouts of the digits prior by kind of program: the reference sample (prior-256.json, the
// machine of the evaluation's other runs, 30 s) against samples on a slower machine at 30, 60
// and 90 s. Run from the repository root: node results/datascicoding-prior/timeouts/timeouts.mjs
import { readFileSync } from 'node:fs';

const here = new URL('.', import.meta.url);
const files = [
  ['reference machine, 30 s', new URL('../prior-256.json', here)],
  ['slower machine, 30 s', new URL('digits-256-t30.json', here)],
  ['slower machine, 60 s', new URL('digits-256-t60.json', here)],
  ['slower machine, 90 s', new URL('digits-256-t90.json', here)],
];
const kinds = {
  'Bagging of LogisticRegression': (b) =>
    b.includes('BaggingClassifier(') && b.includes('LogisticRegression'),
  'with HistGradientBoosting': (b) => b.includes('HistGradientBoostingClassifier('),
  'with GradientBoosting': (b) =>
    b.replaceAll('HistGradientBoostingClassifier(', '').includes('GradientBoostingClassifier('),
};
const rate = (ps) => `${ps.filter((p) => p.reason === 'timeout').length}/${ps.length}`;
console.log(`| sample | timeouts, all | ${Object.keys(kinds).join(' | ')} | mean reward | ran |`);
console.log(`|---|---|${Object.keys(kinds).map(() => '---|').join('')}---|---|`);
for (const [name, file] of files) {
  const json = JSON.parse(readFileSync(file, 'utf8'));
  const ps = json.programs.digits;
  const s = json.summaries.find((x) => x.dataset === 'digits');
  const cells = Object.values(kinds).map((f) => rate(ps.filter((p) => f(p.body))));
  console.log(
    `| ${name} | ${rate(ps)} | ${cells.join(' | ')} | ${s.meanReward.toFixed(3)} | ${(100 * s.ran).toFixed(0)}% |`,
  );
}
