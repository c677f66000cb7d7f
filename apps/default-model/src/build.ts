// One command that rebuilds the embedded default model from nothing:
//   npm run build:default-model [-- --seconds 900 --out packages/default-model/model]
// corpus (random play + descriptions) -> BPE tokenizer -> pretraining -> the model folder of
// @poad/default-model (packages/default-model/model/, held-out text beside it).
//   npm run build:default-model -- --variant informative-prior
// builds the informative-prior variant instead (the corpus adds procedural common sense and
// demonstrations in the environment's layout on foods no task uses, common-sense.ts) into
// packages/default-model/models/informative-prior/, its held-out text inside; the same 910
// pretraining steps as the committed default model, whatever the machine's speed. Its
// label-level prior: `npm run prior-report -w @poad/default-model-builder` (docs/results.md).
//   npm run build:default-model -- --variant code
// builds the code model of DataSciCoding (code-corpus.ts: the environment's prompts and
// scikit-learn build_model bodies) into packages/default-model/models/default-code/, its
// held-out samples inside.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCodeCorpus, DEFAULT_CODE_CORPUS } from './code-corpus.js';
import {
  buildCorpus,
  DEFAULT_CORPUS,
  INFORMATIVE_COMMON_SENSE,
  INFORMATIVE_DEMONSTRATIONS,
} from './corpus.js';
import { CODE_PRETRAIN, DEFAULT_PRETRAIN, pretrain } from './pretrain.js';
import { trainTokenizer } from './tokenizer.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
/**
 * Tokens of the code model's tokenizer: the most frequent merges only (left uncapped, every
 * dataset shape's numbers would become tokens of their own: about 4,700).
 */
const CODE_VOCAB = 1024;

/** The informative-prior variant pretrains as many steps as the committed default model did. */
const INFORMATIVE_STEPS = 910;
const INFORMATIVE_SECONDS = 3600;
const root = resolve(new URL('../../..', import.meta.url).pathname);
const variant = arg('variant', 'default');
if (variant !== 'default' && variant !== 'informative-prior' && variant !== 'code') {
  console.error(`--variant ${variant}: expected default, informative-prior or code`);
  process.exit(2);
}
const informative = variant === 'informative-prior';
const t0 = Date.now();
if (variant === 'code') {
  await buildCodeModel();
  process.exit(0);
}
const work = resolve(
  arg('work', join(root, 'apps', 'default-model', informative ? 'build-informative' : 'build')),
);
const out = resolve(
  arg(
    'out',
    join(root, 'packages', 'default-model', informative ? 'models/informative-prior' : 'model'),
  ),
);
mkdirSync(join(work, 'corpus'), { recursive: true });
const { train, heldOut } = await buildCorpus({
  ...DEFAULT_CORPUS,
  seed: Number(arg('seed', '1')),
  ...(informative
    ? { commonSense: INFORMATIVE_COMMON_SENSE, demonstrations: INFORMATIVE_DEMONSTRATIONS }
    : {}),
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
  seconds: Number(
    arg('seconds', String(informative ? INFORMATIVE_SECONDS : DEFAULT_PRETRAIN.seconds)),
  ),
  steps: Number(arg('steps', String(informative ? INFORMATIVE_STEPS : DEFAULT_PRETRAIN.steps))),
});
copyFileSync(
  join(work, 'corpus', 'heldout.txt'),
  informative ? join(out, 'heldout.txt') : join(out, '..', 'heldout.txt'),
);
writeFileSync(
  join(out, 'training.json'),
  `${JSON.stringify({ ...result, variant, corpusLines: train.length, heldOutLines: heldOut.length, totalSeconds: (Date.now() - t0) / 1000, command: `npm run build:default-model${informative ? ' -- --variant informative-prior' : ''}` }, null, 2)}\n`,
);

/** `--variant code`: the code model of DataSciCoding. */
async function buildCodeModel(): Promise<void> {
  const codeWork = resolve(arg('work', join(root, 'apps', 'default-model', 'build-code')));
  const codeOut = resolve(
    arg('out', join(root, 'packages', 'default-model', 'models', 'default-code')),
  );
  const seed = Number(arg('seed', '1'));
  mkdirSync(join(codeWork, 'corpus'), { recursive: true });
  const samples = Number(arg('samples', String(DEFAULT_CODE_CORPUS.samples)));
  const { train, heldOut } = buildCodeCorpus({ ...DEFAULT_CODE_CORPUS, seed, samples });
  const jsonl = (xs: typeof train) =>
    `${xs.map((x) => JSON.stringify({ prompt: x.prompt, completion: x.completion })).join('\n')}\n`;
  writeFileSync(join(codeWork, 'corpus', 'train.jsonl'), jsonl(train));
  writeFileSync(join(codeWork, 'corpus', 'heldout.jsonl'), jsonl(heldOut));
  // The tokenizer learns from the same text, one sample after another.
  writeFileSync(
    join(codeWork, 'corpus', 'text.txt'),
    `${train.map((x) => x.prompt + x.completion).join('\n')}\n`,
  );
  console.error(`code corpus: ${train.length} samples (+${heldOut.length} held out)`);
  writeFileSync(
    join(codeWork, 'tokenizer.json'),
    trainTokenizer([join(codeWork, 'corpus', 'text.txt')], CODE_VOCAB),
  );
  const result = await pretrain({
    ...CODE_PRETRAIN,
    corpusDir: join(codeWork, 'corpus'),
    tokenizerJson: join(codeWork, 'tokenizer.json'),
    outDir: codeOut,
    seed,
    seconds: Number(arg('seconds', String(CODE_PRETRAIN.seconds))),
    steps: Number(arg('steps', String(CODE_PRETRAIN.steps))),
  });
  // The first 200 held-out samples ship with the model (training runs measure perplexity on them).
  writeFileSync(join(codeOut, 'heldout.jsonl'), jsonl(heldOut.slice(0, 200)));
  writeFileSync(
    join(codeOut, 'training.json'),
    `${JSON.stringify({ ...result, variant, corpusSamples: train.length, heldOutSamples: heldOut.length, totalSeconds: (Date.now() - t0) / 1000, command: 'npm run build:default-model -- --variant code' }, null, 2)}\n`,
  );
}
