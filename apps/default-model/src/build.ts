// One command that rebuilds the embedded default model from nothing:
//   npm run build:default-model [-- --seconds 900 --out packages/default-model/model]
// corpus (random play + descriptions) -> BPE tokenizer -> pretraining -> the model folder of
// @poad/default-model (packages/default-model/model/, held-out text beside it)
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCorpus, DEFAULT_CORPUS } from './corpus.js';
import { DEFAULT_PRETRAIN, pretrain } from './pretrain.js';
import { trainTokenizer } from './tokenizer.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const root = resolve(new URL('../../..', import.meta.url).pathname);
const out = resolve(arg('out', join(root, 'packages', 'default-model', 'model')));
const work = resolve(arg('work', join(root, 'apps', 'default-model', 'build')));
mkdirSync(join(work, 'corpus'), { recursive: true });

const t0 = Date.now();
const { train, heldOut } = await buildCorpus({ ...DEFAULT_CORPUS, seed: Number(arg('seed', '1')) });
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
copyFileSync(join(work, 'corpus', 'heldout.txt'), join(out, '..', 'heldout.txt'));
writeFileSync(
  join(out, 'training.json'),
  `${JSON.stringify({ ...result, corpusLines: train.length, heldOutLines: heldOut.length, totalSeconds: (Date.now() - t0) / 1000, command: 'npm run build:default-model' }, null, 2)}\n`,
);
