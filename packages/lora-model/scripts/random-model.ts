/**
 * Write a randomly initialised model folder of a benchmark size, with a given tokenizer, for
 * timing whole training runs at sizes no embedded model has:
 *
 *   npx tsx packages/lora-model/scripts/random-model.ts --size base --tokenizer packages/default-model/model --out /tmp/base
 *   npm run train:virtualhome -- --model /tmp/base --backend webgpu
 *
 * Sizes (those of the lora-model benchmark): tiny (d 256, 4 layers), small (d 512, 8 layers),
 * base (d 768, 12 layers, 12 heads, ffn 2048, vocab 32,000; about 125 M parameters). The
 * vocabulary is at least the tokenizer's; ids the tokenizer never produces stay unused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initBackend } from '@poad/tfjs-kernels';
import { createCausalLM, saveCausalLM } from '../src/index.js';

const SIZES = {
  tiny: {
    hidden_size: 256,
    intermediate_size: 688,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    vocab_size: 4096,
  },
  small: {
    hidden_size: 512,
    intermediate_size: 1376,
    num_hidden_layers: 8,
    num_attention_heads: 8,
    vocab_size: 8192,
  },
  base: {
    hidden_size: 768,
    intermediate_size: 2048,
    num_hidden_layers: 12,
    num_attention_heads: 12,
    vocab_size: 32000,
  },
} as const;

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'base' },
    tokenizer: { type: 'string', default: 'packages/default-model/model' },
    out: { type: 'string' },
    seed: { type: 'string', default: '1' },
    // cpu needs no .wasm file (e.g. inside a bundle); the model serves timings either way.
    backend: { type: 'string', default: 'wasm' },
  },
});
const size = SIZES[values.size as keyof typeof SIZES];
if (!size || !values.out) {
  console.error(
    `usage: random-model.ts --size ${Object.keys(SIZES).join('|')} --tokenizer MODEL_DIR --out DIR [--seed N] [--backend wasm|cpu]`,
  );
  process.exit(2);
}
const tokenizerJson = readFileSync(join(values.tokenizer!, 'tokenizer.json'), 'utf8');
const source = JSON.parse(readFileSync(join(values.tokenizer!, 'config.json'), 'utf8'));
const tokens = Object.keys(JSON.parse(tokenizerJson).model.vocab as object).length;
await initBackend(values.backend as 'wasm' | 'cpu');
const model = createCausalLM(
  {
    model_type: 'llama',
    ...size,
    vocab_size: Math.max(size.vocab_size, tokens),
    max_position_embeddings: 2048,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
    bos_token_id: source.bos_token_id ?? null,
    eos_token_id: source.eos_token_id ?? null,
  },
  { seed: Number(values.seed) },
);
await saveCausalLM(model, values.out, { tokenizerJson });
const params = (await model.exportWeights()).values();
let n = 0;
for (const t of params) n += t.data.length;
console.log(
  `${values.out}: ${values.size}, ${(n / 1e6).toFixed(1)} M parameters, vocabulary ${model.config.vocabSize}`,
);
model.dispose();
