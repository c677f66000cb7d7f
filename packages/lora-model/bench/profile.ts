/**
 * Per-kernel time of one step, for finding the next bottleneck:
 *
 *   npx tsx bench/profile.ts [fwd|lora|score|naive] [wasm|cpu|webgpu] [batch] [seq] [tiny|small|base] [--counts] [--tfjs-adam]
 *
 * A LoRA step is the forward and backward pass, then the optimiser the trainers use: the global
 * gradient norm and a clipped AdamW step (`Adam` of @poad/ppo, one multi-tensor program on
 * webgpu); `--tfjs-adam` takes TF.js's own `tf.train.adam` instead (a dozen programs per matrix).
 *
 * On webgpu it first counts the GPU work of one step (`gpuCounters` of @poad/tfjs-kernels): the
 * programs dispatched, the host reads and the bytes read back, by phase (a LoRA step: `gradients`,
 * the forward and backward pass, then `optimiser`), with the package's WGSL fused ops and without
 * them (the TF.js compositions). The counts are what fusing saves on any GPU, whatever the
 * adapter's speed, and a software adapter gives the same. `--counts` stops there; otherwise the
 * kernel times follow (on webgpu they need the `timestamp-query` feature).
 */

import { Adam } from '@poad/ppo';
import {
  type BackendChoice,
  type GpuCounters,
  gpuCounters,
  gpuCountersSince,
  initBackend,
  releaseBackend,
  setFusedOps,
  setGpuPhase,
  webGpuFusedOps,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { createCausalLM } from '../src/index.js';
import { loraStep } from './lora-step.js';

const SIZES = {
  tiny: { vocab_size: 4096, hidden_size: 256, intermediate_size: 688, layers: 4, heads: 4 },
  small: { vocab_size: 8192, hidden_size: 512, intermediate_size: 1376, layers: 8, heads: 8 },
  base: { vocab_size: 32000, hidden_size: 768, intermediate_size: 2048, layers: 12, heads: 12 },
} as const;

const countsOnly = process.argv.includes('--counts');
const tfjsAdam = process.argv.includes('--tfjs-adam');
const argv = process.argv.filter((a) => !a.startsWith('--'));
const mode = argv[2] ?? 'fwd';
const backend = (argv[3] ?? 'wasm') as BackendChoice;
const B = Number(argv[4] ?? 4);
const T = Number(argv[5] ?? 64);
const size = SIZES[(argv[6] ?? 'tiny') as keyof typeof SIZES];
if (!size) throw new Error(`size must be one of ${Object.keys(SIZES).join(', ')}`);
console.log((await initBackend(backend)).description);
const V = size.vocab_size;
const model = createCausalLM(
  {
    vocab_size: V,
    hidden_size: size.hidden_size,
    intermediate_size: size.intermediate_size,
    num_hidden_layers: size.layers,
    num_attention_heads: size.heads,
  },
  { seed: 1, lora: true },
);
const prompts = Array.from({ length: B }, (_, i) => [i + 1]);
const actions = Array.from({ length: B }, (_, i) =>
  Array.from({ length: T - 1 }, (_, j) => (i * 31 + j * 7) % V),
);
const opt = tf.train.adam(1e-4);
const adam = new Adam(model.policyVariables(), { lr: 1e-4 });
const prompt = Array.from({ length: 100 }, (_, j) => (j * 13) % V);
const cands = Array.from({ length: 10 }, (_, i) =>
  Array.from({ length: 8 }, (_, j) => (i * 7 + j * 3) % V),
);
const run = async (): Promise<void> => {
  if (mode === 'score' || mode === 'naive') {
    await model.scoreContinuations([prompt], [cands], { prefixSharing: mode === 'score' });
  } else if (mode === 'fwd') {
    const l = tf.tidy(() => tf.mean(model.tokenStats(prompts, actions).logProbs));
    await l.data();
    l.dispose();
  } else if (!tfjsAdam) {
    await loraStep(model, adam, prompts, actions);
  } else {
    // opt.minimize's two halves, so that the counts can tell them apart.
    setGpuPhase('gradients');
    const { value, grads } = opt.computeGradients(
      () => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
      model.policyVariables(),
    );
    setGpuPhase('optimiser');
    opt.applyGradients(grads as Parameters<typeof opt.applyGradients>[0]);
    tf.dispose(grads);
    setGpuPhase('read');
    await value.data();
    value.dispose();
  }
  setGpuPhase('other');
};

/** The GPU work of one call of `run` (webgpu only). */
async function countStep(): Promise<GpuCounters> {
  const before = gpuCounters()!;
  await run();
  return gpuCountersSince(before, gpuCounters()!);
}

function countsTable(c: GpuCounters): string {
  const row = (name: string, w: { programs: number; reads: number; readBytes: number }) =>
    `  ${name.padEnd(10)} ${String(w.programs).padStart(8)} ${String(w.reads).padStart(6)} ${String(w.readBytes).padStart(12)}`;
  return [
    `  ${'phase'.padEnd(10)} ${'programs'.padStart(8)} ${'reads'.padStart(6)} ${'read bytes'.padStart(12)}`,
    ...Object.entries(c.phases).map(([k, w]) => row(k, w)),
    row('total', c),
  ].join('\n');
}

await run();
if (tf.getBackend() === 'webgpu') {
  const fused = await countStep();
  setFusedOps(null, 'webgpu');
  await run();
  const plain = await countStep();
  setFusedOps(webGpuFusedOps, 'webgpu');
  console.log(`GPU work of one ${mode} step (batch ${B} × ${T}), with the WGSL fused ops:`);
  console.log(countsTable(fused));
  console.log('with TF.js compositions instead:');
  console.log(countsTable(plain));
  console.log(
    `GPU programs per ${mode} step: ${fused.programs} with the WGSL fused ops, ${plain.programs} with TF.js compositions (${(plain.programs / fused.programs).toFixed(2)}x)`,
  );
}
if (countsOnly) {
  model.dispose();
  opt.dispose();
  adam.dispose();
  await releaseBackend();
  process.exit(0);
}
const t0 = performance.now();
const prof = await tf.profile(run);
console.log(`total ${(performance.now() - t0).toFixed(0)} ms, ${prof.kernels.length} kernels`);
const by = new Map<string, { ms: number; n: number }>();
for (const k of prof.kernels) {
  const key = `${k.name} ${k.inputShapes.map((s) => `[${s}]`).join('x')}`;
  const e = by.get(key) ?? { ms: 0, n: 0 };
  const ms = await k.kernelTimeMs;
  e.ms += typeof ms === 'number' ? ms : 0;
  e.n++;
  by.set(key, e);
}
const top = [...by.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
for (const [k, v] of top) console.log(`${v.ms.toFixed(1).padStart(8)} ms  x${v.n}  ${k}`);
model.dispose();
opt.dispose();
adam.dispose();
await releaseBackend();
