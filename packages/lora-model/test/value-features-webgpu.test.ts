/**
 * The critic's model paths on webgpu against wasm: value-head features of the final hidden state
 * and of every layer, with the adapter off, with a critic adapter of its own and with the actor's,
 * and the gradients of a value loss through them (head and critic adapter). Runs where Dawn finds
 * an adapter; under CI it must find one.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import { initBackend, releaseBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import { featureRows, type ValueFeatures } from '../src/features.js';
import { LoraAdapter } from '../src/lora.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds } from './helpers.js';

vi.setConfig({ testTimeout: 120_000 });

const gpu = await webGpuTestFile('critic webgpu tests', { initBackend, releaseBackend });

/** Relative-to-scale max difference (scale at least 1). */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  let scale = 1;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i] as number));
  expect(maxAbsDiff(a, b) / scale, what).toBeLessThan(tol);
}

type Pass = 'base' | 'critic' | 'actor';

/**
 * Values of the model's head on `features` from a pass with the adapter `pass` names, and the
 * gradients of Σ(V − 1)² w.r.t. the head and the critic adapter (zero where a variable is not
 * reached), all read to the host.
 */
async function criticPaths(
  model: CausalLM,
  critic: LoraAdapter,
  features: ValueFeatures,
  pass: Pass,
): Promise<{ values: Float32Array; grads: Float32Array[] }> {
  const rng = new SeededRng(9);
  const V = model.config.vocabSize;
  const prompts = [randomIds(rng, 5, V), randomIds(rng, 3, V)];
  const actions = [randomIds(rng, 3, V), randomIds(rng, 2, V)];
  const seq = 8;
  const ids = new Int32Array(2 * seq);
  const rows: number[] = [];
  prompts.forEach((p, i) => {
    ids.set([...p, ...actions[i]!], i * seq);
    for (let k = 0; k < actions[i]!.length; k++) rows.push(i * seq + p.length - 1 + k);
  });
  const adapter =
    pass === 'critic' ? critic : pass === 'actor' ? (model.adapter ?? undefined) : undefined;
  const values = () =>
    model.values(featureRows(model, { ids, batch: 2, seq, adapter }, rows, features));
  const v = tf.tidy(values);
  const vars = [...model.valueVariables(), ...critic.variables()];
  const { value, grads } = tf.variableGrads(
    () => tf.sum(tf.square(tf.sub(values(), 1))) as tf.Scalar,
    vars,
  );
  const out = {
    values: (await v.data()) as Float32Array,
    grads: await Promise.all(
      vars.map(async (x) =>
        grads[x.name] ? ((await grads[x.name]!.data()) as Float32Array) : new Float32Array(x.size),
      ),
    ),
  };
  tf.dispose([v, value, ...Object.values(grads).filter((g) => g)]);
  return out;
}

describe.runIf(gpu.ok)("webgpu = wasm on the critic's paths", () => {
  const cases: [ValueFeatures, Pass][] = [
    ['layers', 'base'],
    ['layers', 'critic'],
    ['last', 'critic'],
    ['layers', 'actor'],
  ];
  for (const [features, pass] of cases) {
    it(`'${features}' features, ${pass} pass: values and value-loss gradients within 1e-4`, async () => {
      const results = [];
      for (const backend of ['wasm', 'webgpu'] as const) {
        if (backend === 'webgpu') await initBackend('webgpu', { allowSoftwareAdapter: true });
        else await initBackend('wasm');
        expect(tf.getBackend()).toBe(backend);
        const model = createCausalLM(tinyConfig({ rope_theta: 500 }), {
          seed: 3,
          initStd: 0.2,
          lora: true,
          valueHead: { hiddenSizes: [16, 8], features },
        });
        const critic = LoraAdapter.create(model.config, { r: 4, alpha: 8 }, 5);
        // Non-zero B everywhere, so both adapters move the features.
        for (const v of [...critic.variables(), ...model.policyVariables()])
          v.assign(tf.tidy(() => tf.randomNormal(v.shape, 0, 0.2, 'float32', 7)));
        const before = tf.memory().numTensors;
        results.push(await criticPaths(model, critic, features, pass));
        expect(tf.memory().numTensors, `${backend} leaks tensors`).toBe(before);
        critic.dispose();
        model.dispose();
      }
      const [w, g] = results as [
        Awaited<ReturnType<typeof criticPaths>>,
        Awaited<ReturnType<typeof criticPaths>>,
      ];
      close(g.values, w.values, 1e-4, 'values');
      g.grads.forEach((x, i) => {
        close(x, w.grads[i]!, 1e-4, `gradient ${i}`);
      });
      // The head's gradients are never zero, and the critic adapter's only in its own pass.
      const heads = 3;
      expect(w.grads.slice(0, heads).every((x) => x.some((v) => v !== 0))).toBe(true);
      expect(w.grads.slice(heads).some((x) => x.some((v) => v !== 0))).toBe(pass === 'critic');
    });
  }
});
