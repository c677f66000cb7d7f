/**
 * Batched generation on one backend: time per token and, on webgpu, the GPU programs and host
 * reads, for the host loop (logits read and sampled on the host every token) and the device loop
 * at several `stopCheckEvery` values. A random model of the given shape; no stop token, so every
 * row runs to `--tokens`.
 *
 *   npx tsx bench/generate.ts [--backend webgpu] [--batch 8] [--tokens 64] [--vocab 4096]
 *     [--hidden 256] [--layers 4] [--heads 4] [--kv-heads 2] [--every 1,8,32]
 */
import { parseArgs } from 'node:util';
import { gpuCounters, gpuCountersSince, initBackend, releaseBackend } from '@poad/tfjs-kernels';
import { createCausalLM } from '../src/causal-lm.js';
import type { GenerateBatchOptions } from '../src/generate.js';

const { values: a } = parseArgs({
  options: {
    backend: { type: 'string', default: 'webgpu' },
    batch: { type: 'string', default: '8' },
    tokens: { type: 'string', default: '64' },
    vocab: { type: 'string', default: '4096' },
    hidden: { type: 'string', default: '256' },
    layers: { type: 'string', default: '4' },
    heads: { type: 'string', default: '4' },
    'kv-heads': { type: 'string', default: '2' },
    every: { type: 'string', default: '1,8,32' },
  },
});
const backend = a.backend as string;
await initBackend(backend as 'webgpu', { allowSoftwareAdapter: true });
const model = createCausalLM(
  {
    vocab_size: Number(a.vocab),
    hidden_size: Number(a.hidden),
    intermediate_size: 2 * Number(a.hidden),
    num_hidden_layers: Number(a.layers),
    num_attention_heads: Number(a.heads),
    num_key_value_heads: Number(a['kv-heads']),
  },
  { seed: 1, initStd: 0.3 },
);
const batch = Number(a.batch);
const tokens = Number(a.tokens);
const prompts = Array.from({ length: batch }, (_, i) =>
  Array.from({ length: 8 + 3 * i }, (_, j) => (i * 97 + j * 13) % Number(a.vocab)),
);
const seeds = prompts.map((_, i) => i + 1);

async function run(name: string, extra: GenerateBatchOptions): Promise<void> {
  const opts = { maxNewTokens: tokens, temperature: 1, topK: 50, seeds, ...extra };
  await model.generateBatch(prompts, { ...opts, maxNewTokens: 2 }); // shaders, buffer pool
  const before = gpuCounters();
  const t0 = performance.now();
  const out = await model.generateBatch(prompts, opts);
  const ms = performance.now() - t0;
  const work = before ? gpuCountersSince(before, gpuCounters()!) : null;
  const n = out.reduce((s, r) => s + r.tokens.length, 0) / batch;
  console.log(
    `${name.padEnd(24)} ${(ms / n).toFixed(2).padStart(8)} ms per token` +
      (work
        ? `  ${work.programs} programs (${(work.programs / n).toFixed(1)} per token), ${work.reads} reads, ${work.readBytes} bytes`
        : ''),
  );
}

console.log(
  `${backend}: batch ${batch}, ${tokens} tokens, vocab ${a.vocab}, hidden ${a.hidden}, ${a.layers} layers`,
);
await run('host loop', { sampleOnDevice: false });
for (const every of String(a.every).split(',').map(Number)) {
  await run(`device, every ${every}`, { stopCheckEvery: every });
}
model.dispose();
await releaseBackend();
