/** Per-kernel time of one forward pass (and one LoRA step): npx tsx bench/profile.ts [fwd|lora] */
import * as tf from '@tensorflow/tfjs-core';
import { createCausalLM, initBackend } from '../src/index.js';

const mode = process.argv[2] ?? 'fwd';
console.log((await initBackend((process.argv[3] as 'wasm' | 'cpu') ?? 'wasm')).description);
const model = createCausalLM(
  {
    vocab_size: 4096,
    hidden_size: 256,
    intermediate_size: 688,
    num_hidden_layers: 4,
    num_attention_heads: 4,
  },
  { seed: 1, lora: true },
);
const B = Number(process.argv[4] ?? 4);
const T = Number(process.argv[5] ?? 64);
const prompts = Array.from({ length: B }, (_, i) => [i + 1]);
const actions = Array.from({ length: B }, (_, i) =>
  Array.from({ length: T - 1 }, (_, j) => (i * 31 + j * 7) % 4096),
);
const opt = tf.train.adam(1e-4);
const prompt = Array.from({ length: 100 }, (_, j) => (j * 13) % 4096);
const cands = Array.from({ length: 10 }, (_, i) =>
  Array.from({ length: 8 }, (_, j) => (i * 7 + j * 3) % 4096),
);
const run = async (): Promise<void> => {
  if (mode === 'score' || mode === 'naive') {
    await model.scoreContinuations([prompt], [cands], { prefixSharing: mode === 'score' });
  } else if (mode === 'fwd') {
    const l = tf.tidy(() => tf.mean(model.tokenStats(prompts, actions).logProbs));
    await l.data();
    l.dispose();
  } else {
    const l = opt.minimize(
      () => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
      true,
      model.policyVariables(),
    );
    await l?.data();
    l?.dispose();
  }
};
await run();
const t0 = performance.now();
const prof = await tf.profile(run);
console.log(`total ${(performance.now() - t0).toFixed(0)} ms`);
const by = new Map<string, { ms: number; n: number }>();
for (const k of prof.kernels) {
  const key = `${k.name} ${k.inputShapes.map((s) => `[${s}]`).join('x')}`;
  const e = by.get(key) ?? { ms: 0, n: 0 };
  e.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
  e.n++;
  by.set(key, e);
}
const top = [...by.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
for (const [k, v] of top) console.log(`${v.ms.toFixed(1).padStart(8)} ms  x${v.n}  ${k}`);
