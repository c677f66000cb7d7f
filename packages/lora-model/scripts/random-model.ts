/**
 * Write a randomly initialised model folder of a benchmark size, with a given tokenizer, for
 * timing whole training runs at sizes no embedded model has:
 *
 *   npx tsx packages/lora-model/scripts/random-model.ts --size base --tokenizer packages/default-model/model --out /tmp/base
 *   npx tsx packages/lora-model/scripts/random-model.ts --size 1b --backend webgpu --out /tmp/1b
 *   npm run train:virtualhome -- --model /tmp/base --backend webgpu
 *
 * Sizes (those of the lora-model benchmark): tiny (d 256, 4 layers), small (d 512, 8 layers),
 * base (d 768, 12 layers, 12 heads, ffn 2048, vocab 32,000; about 125 M parameters), and the
 * shapes of real models: 1b (Llama-3.2-1B: d 2048, 16 layers, 32 heads, 8 kv heads, ffn 8192,
 * vocab 128,256, tied head, llama3 rope scaling factor 32; 1.24 B parameters) and 8b
 * (Llama-3.1-8B: d 4096, 32 layers, 32/8 heads, ffn 14,336, vocab 128,256, factor 8; 8.0 B).
 * `--dtype` is the stored precision (bf16 by default for 1b and 8b, as those models ship; f32 for
 * the others); shards stay under 2 GB. With `--backend webgpu` the weights are drawn on the GPU
 * (no JavaScript random numbers for billions of values; the host still holds one float32 copy
 * while writing). The vocabulary is at least the tokenizer's; ids the tokenizer never produces
 * stay unused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type StoreDType, writeCheckpoint } from '@poad/hf-files';
import { type BackendChoice, initBackend } from '@poad/tfjs-kernels';
import { createCausalLM, llamaConfigOf } from '../src/index.js';

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
  '1b': {
    hidden_size: 2048,
    intermediate_size: 8192,
    num_hidden_layers: 16,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    vocab_size: 128_256,
    tie_word_embeddings: true,
    rope_theta: 500_000,
    rope_scaling: {
      rope_type: 'llama3',
      factor: 32,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 8192,
    },
  },
  '8b': {
    hidden_size: 4096,
    intermediate_size: 14_336,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    vocab_size: 128_256,
    rope_theta: 500_000,
    rope_scaling: {
      rope_type: 'llama3',
      factor: 8,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 8192,
    },
  },
} as const;

const STORE: Record<string, StoreDType> = { f32: 'F32', bf16: 'BF16', f16: 'F16' };
const PACKED = { BF16: 'bfloat16', F16: 'float16', F32: 'float32' } as const;

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'base' },
    tokenizer: { type: 'string', default: 'packages/default-model/model' },
    out: { type: 'string' },
    seed: { type: 'string', default: '1' },
    // cpu needs no .wasm file (e.g. inside a bundle); the model serves timings either way.
    backend: { type: 'string', default: 'wasm' },
    dtype: { type: 'string' },
  },
});
const size = SIZES[values.size as keyof typeof SIZES];
const big = values.size === '1b' || values.size === '8b';
const storeAs = STORE[values.dtype ?? (big ? 'bf16' : 'f32')];
if (!size || !values.out || !storeAs) {
  console.error(
    `usage: random-model.ts --size ${Object.keys(SIZES).join('|')} --tokenizer MODEL_DIR --out DIR [--dtype f32|bf16|f16] [--seed N] [--backend wasm|cpu|webgpu]`,
  );
  process.exit(2);
}
const tokenizerJson = readFileSync(join(values.tokenizer!, 'tokenizer.json'), 'utf8');
const source = JSON.parse(readFileSync(join(values.tokenizer!, 'config.json'), 'utf8'));
const tokens = Object.keys(JSON.parse(tokenizerJson).model.vocab as object).length;
await initBackend(values.backend as BackendChoice);
const onGpu = values.backend === 'webgpu' && storeAs !== 'F32';
const model = createCausalLM(
  {
    model_type: 'llama',
    max_position_embeddings: big ? 131_072 : 2048,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
    bos_token_id: source.bos_token_id ?? null,
    eos_token_id: source.eos_token_id ?? null,
    ...size,
    vocab_size: Math.max(size.vocab_size, tokens),
  },
  // On webgpu, drawn and packed in the stored precision on the GPU (no host random numbers).
  { seed: Number(values.seed), weightDtype: onGpu ? PACKED[storeAs] : 'float32' },
);
const tensors = await model.exportWeights();
await writeCheckpoint(values.out, llamaConfigOf(model), tensors, {
  storeAs,
  tokenizerJson,
  maxShardBytes: 2e9,
});
let n = 0;
for (const t of tensors.values()) n += t.data.length;
console.log(
  `${values.out}: ${values.size}, ${(n / 1e6).toFixed(1)} M parameters stored as ${storeAs}, vocabulary ${model.config.vocabSize}`,
);
model.dispose();
