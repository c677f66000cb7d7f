/**
 * Frozen float32 products on webgpu: TF.js's matmul, the tiled program, or per shape as a plan
 * measured on the device says (`CausalLM.useProducts`, `CausalLM.tuneProducts`). Every choice
 * computes the same logits, log-probs and LoRA gradients within float32 tolerance; the plan covers
 * each frozen weight's product and its input gradient; a head tied to a float32 embedding is
 * multiplied transposed instead of being stored twice.
 */
import { startWebGpuForTests } from '@poad/dev-kit';
import { initBackend, type ProductChoice, releaseBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import type { HFModelConfig } from '../src/config.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds } from './helpers.js';

vi.setConfig({ testTimeout: 120_000 });

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

const TIED = tinyConfig({ model_type: 'qwen2', tie_word_embeddings: true });
const UNTIED = tinyConfig();

function build(config: HFModelConfig): CausalLM {
  return createCausalLM(config, { seed: 3, lora: true, weightDtype: 'float32', initStd: 0.2 });
}

/** Logits, teacher-forced log-probs and the LoRA gradients of their sum. */
async function outputs(model: CausalLM): Promise<Float32Array[]> {
  const rng = new SeededRng(7);
  const V = model.config.vocabSize;
  const prompts = [randomIds(rng, 5, V), randomIds(rng, 70, V)];
  const actions = [randomIds(rng, 3, V), randomIds(rng, 4, V)];
  const logits = await model.logits([[...prompts[0]!, ...actions[0]!]]);
  const vars = model.policyVariables();
  const { value, grads } = tf.variableGrads(
    () => tf.sum(model.tokenStats(prompts, actions).logProbs) as tf.Scalar,
    vars,
  );
  const out = [
    logits,
    (await value.data()) as Float32Array,
    ...(await Promise.all(
      vars.map((v) => (grads[v.name] as tf.Tensor).data() as Promise<Float32Array>),
    )),
  ];
  tf.dispose([value, ...Object.values(grads)]);
  return out;
}

/** Names of the product kernels one forward pass of `model` runs. */
async function productKernels(model: CausalLM): Promise<string[]> {
  const ids = Int32Array.from([1, 2, 3, 4]);
  const info = await tf.profile(() =>
    tf.tidy(() => model.head(model.forward({ ids, batch: 1, seq: 4 }).hidden)),
  );
  tf.dispose(info.result as tf.Tensor);
  return info.kernels.map((k) => k.name).filter((n) => /MatMul/.test(n));
}

describe.runIf(gpu.ok || process.env.CI)('frozen float32 products on webgpu', () => {
  it('is available under CI', () => {
    expect(gpu.ok, gpu.ok ? '' : gpu.reason).toBe(true);
  });

  it('a head tied to a float32 embedding is the embedding itself, not a second copy', () => {
    const sizes: number[] = [];
    for (const config of [UNTIED, TIED]) {
      const before = tf.memory().numBytes;
      const model = build(config);
      sizes.push(tf.memory().numBytes - before);
      model.dispose();
    }
    // qwen2 adds q/k/v biases (2 layers × (32 + 16 + 16) floats); the untied head adds [32, 61].
    const c = UNTIED;
    const biases = 2 * (32 + 16 + 16) * 4;
    expect(sizes[0]! - (sizes[1]! - biases)).toBe(c.hidden_size * c.vocab_size * 4);
  });

  for (const [name, config] of [
    ['untied llama', UNTIED],
    ['tied qwen2', TIED],
  ] as const) {
    it(`tiled, TF.js and a tuned plan give the same logits, log-probs and LoRA gradients (${name})`, async () => {
      const model = build(config);
      const before = tf.memory().numTensors;
      const layers = model.config.numLayers;
      expect(model.products).toBe('tfjs');
      expect(model.frozenProducts().length).toBe(4 * layers + 1);
      const reference = await outputs(model);
      expect((await productKernels(model)).filter((k) => k === 'PoadGpuPackedMatMul')).toEqual([]);

      model.useProducts('tiled');
      // Every frozen product (4 per layer and the head) runs tiled; only LoRA's stay TF.js's.
      expect((await productKernels(model)).filter((k) => k === 'PoadGpuPackedMatMul').length).toBe(
        4 * layers + 1,
      );
      const tiled = await outputs(model);

      const plan = await model.tuneProducts({ rows: [4, 64], reps: 1, adapter: 'test' });
      expect(model.products).toBe(plan);
      // Five weight shapes (q|k|v, o, gate|up, down, head), both forms, two row counts.
      expect(plan.timings.length).toBe(5 * 2 * 2);
      const head = plan.timings.filter((t) => t.weight[0] === model.config.vocabSize);
      expect(
        head.length + plan.timings.filter((t) => t.weight[1] === model.config.vocabSize).length,
      ).toBe(4);
      const tuned = await outputs(model);
      expect(tf.memory().numTensors).toBe(before);

      for (const [label, got] of [
        ['tiled', tiled],
        ['plan', tuned],
      ] as const) {
        got.forEach((values, i) => {
          let scale = 1;
          for (const v of reference[i]!) scale = Math.max(scale, Math.abs(v));
          expect(maxAbsDiff(values, reference[i]!) / scale, `${label}, output ${i}`).toBeLessThan(
            1e-4,
          );
        });
      }
      model.dispose();
    });
  }

  it('a merged adapter keeps the model’s choice for the weights it turns into float32', async () => {
    const model = build(UNTIED);
    const choice: ProductChoice = 'tiled';
    model.useProducts(choice);
    model.mergeAdapter();
    expect((await productKernels(model)).filter((k) => k === 'PoadGpuPackedMatMul').length).toBe(
      4 * model.config.numLayers + 1,
    );
    model.dispose();
  });
});
