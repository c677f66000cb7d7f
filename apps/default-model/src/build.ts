// One command that rebuilds the embedded default model from nothing:
//   npm run build:default-model [-- --seconds 900 --out packages/default-model/model]
// corpus (random play + descriptions) -> BPE tokenizer -> pretraining -> the model folder of
// @poad/default-model (packages/default-model/model/, held-out text beside it).
//   npm run build:default-model -- --variant informative-prior
// builds the informative-prior variant instead (the corpus adds procedural common sense,
// common-sense.ts) into apps/default-model/build-informative/model/, its held-out text inside.
// It is not shipped: its label-level prior measured no better than the default's
// (docs/results.md; `npm run prior-report -w @poad/default-model-builder`).
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCorpus, DEFAULT_CORPUS, INFORMATIVE_COMMON_SENSE } from './corpus.js';
import { DEFAULT_PRETRAIN, pretrain } from './pretrain.js';
import { trainTokenizer } from './tokenizer.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const root = resolve(new URL('../../..', import.meta.url).pathname);
const variant = arg('variant', 'default');
if (variant !== 'default' && variant !== 'informative-prior') {
  console.error(`--variant ${variant}: expected default or informative-prior`);
  process.exit(2);
}
const informative = variant === 'informative-prior';
const work = resolve(
  arg('work', join(root, 'apps', 'default-model', informative ? 'build-informative' : 'build')),
);
const out = resolve(
  arg('out', informative ? join(work, 'model') : join(root, 'packages', 'default-model', 'model')),
);
mkdirSync(join(work, 'corpus'), { recursive: true });

const t0 = Date.now();
const { train, heldOut } = await buildCorpus({
  ...DEFAULT_CORPUS,
  seed: Number(arg('seed', '1')),
  ...(informative ? { commonSense: INFORMATIVE_COMMON_SENSE } : {}),
});
writeFileSync(join(work, 'corpus', 'train.txt'), `${train.join('\n')}\n`);
writeFileSync(join(work, 'corpus', 'heldout.txt'), `${heldOut.join('\n')}\n`);
console.error(`corpus: ${train.length} lines (+${heldOut.length} held out)`);
writeFileSync(join(work, 'tokenizer.json'), trainTokenizer([join(work, 'corpus', 'train.txt')]));
const result = await pretrain({
  ...DEFAULT_PRETRAIN,
  corpusDir: join(work, 'corpus'),
  tokenizerJson: join(work, 'tokenizer.json'),
  outDir: out,
  seed: Number(arg('seed', '1')),
  seconds: Number(arg('seconds', String(DEFAULT_PRETRAIN.seconds))),
  steps: Number(arg('steps', String(DEFAULT_PRETRAIN.steps))),
});
copyFileSync(
  join(work, 'corpus', 'heldout.txt'),
  informative ? join(out, 'heldout.txt') : join(out, '..', 'heldout.txt'),
);
writeFileSync(
  join(out, 'training.json'),
  `${JSON.stringify({ ...result, variant, corpusLines: train.length, heldOutLines: heldOut.length, totalSeconds: (Date.now() - t0) / 1000, command: `npm run build:default-model${informative ? ' -- --variant informative-prior' : ''}` }, null, 2)}\n`,
);
