/**
 * The model on the webgpu backend against wasm: every model path, on small shapes (a software
 * adapter such as lavapipe is slow), and the model's own TF.js compositions against the WGSL
 * fused ops of @poad/tfjs-kernels (whose tests cover the backend itself). Runs where Dawn finds an
 * adapter; under CI (which installs lavapipe) it must find one, so a missing adapter fails instead
 * of skipping.
 */
import { defaultModelPath } from '@poad/default-model';
import { webGpuTestFile } from '@poad/dev-kit';
import {
  type FusedOps,
  initBackend,
  releaseBackend,
  setFusedOps,
  webGpuFusedOps,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import {
  loadAdapter,
  loadCausalLM,
  loadValueHead,
  saveAdapter,
  saveValueHead,
} from '../src/checkpoint.js';
import type { HFModelConfig } from '../src/config.js';
import { rmsNorm, swiGlu } from '../src/layers.js';
import { SeededRng } from '../src/rng.js';
import { applyRope, ropeTables } from '../src/rope.js';
import { llama3Config, qwen3Config, tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, tempDir } from './helpers.js';

// A software adapter compiles every shader on first use: seconds per test.
vi.setConfig({ testTimeout: 120_000 });

const DEFAULT_MODEL = defaultModelPath;

// The backend's start itself is tested in @poad/tfjs-kernels.
const gpu = await webGpuTestFile('webgpu tests', { initBackend, releaseBackend });

/** Run `f` on `backend` and return what it returns. */
async function on<T>(backend: 'wasm' | 'webgpu', f: () => Promise<T>): Promise<T> {
  if (backend === 'webgpu') await initBackend('webgpu', { allowSoftwareAdapter: true });
  else await initBackend('wasm');
  expect(tf.getBackend()).toBe(backend);
  return f();
}

/** Relative-to-scale max difference (scale at least 1). */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  let scale = 1;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i] as number));
  expect(maxAbsDiff(a, b) / scale, what).toBeLessThan(tol);
}

describe.runIf(gpu.ok)("webgpu fused ops = the model's TF.js compositions", () => {
  /** Values and input gradients of `f` under upstream gradient `dy`, with or without fused ops. */
  async function valueAndGrads(
    fused: FusedOps | null,
    f: (...xs: tf.Tensor[]) => tf.Tensor,
    xs: tf.Tensor[],
    dySeed: number,
  ): Promise<Float32Array[]> {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    setFusedOps(fused, 'webgpu');
    try {
      const y = tf.tidy(() => f(...xs));
      const dy = tf.tidy(() => tf.randomNormal(y.shape, 0, 1, 'float32', dySeed));
      const grads = tf.grads((...a: tf.Tensor[]) => f(...a))(xs, dy);
      const out = [await y.data(), ...(await Promise.all(grads.map((g) => g.data())))];
      tf.dispose([y, dy, ...grads]);
      return out as Float32Array[];
    } finally {
      setFusedOps(webGpuFusedOps, 'webgpu');
    }
  }

  async function compare(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]): Promise<void> {
    const before = tf.memory().numTensors;
    const fused = await valueAndGrads(webGpuFusedOps, f, xs, 3);
    const plain = await valueAndGrads(null, f, xs, 3);
    fused.forEach((a, i) => {
      close(a, plain[i] as Float32Array, 2e-5, `output ${i}`);
    });
    expect(tf.memory().numTensors).toBe(before);
  }

  const rnd = (shape: number[], seed: number, mean = 0) =>
    tf.randomNormal(shape, mean, 1, 'float32', seed);

  it('RMSNorm, values and gradients (rows and widths that do not fill a workgroup)', async () => {
    for (const [rows, cols] of [
      [5, 37],
      [3, 300],
    ] as const) {
      const x = rnd([rows, cols], 1);
      const w = rnd([cols], 2, 1);
      await compare((a, b) => rmsNorm(a as tf.Tensor2D, b as tf.Tensor1D, 1e-5), [x, w]);
      tf.dispose([x, w]);
    }
  });

  it('SwiGLU, values and gradients', async () => {
    const g = rnd([7, 33], 4);
    const u = rnd([7, 33], 5);
    await compare((a, b) => swiGlu(a as tf.Tensor2D, b as tf.Tensor2D), [g, u]);
    tf.dispose([g, u]);
  });

  it('rotary embedding, values and input gradient', async () => {
    const rows = 6;
    const heads = 3;
    const hd = 8;
    const x = rnd([rows, heads * hd], 6);
    const positions = Int32Array.from({ length: rows }, (_, i) => (i * 7) % 11);
    // The tables depend on whether fused ops are active, so they are built inside f.
    await compare(
      (a) => {
        const t = ropeTables(positions, hd, 500);
        const y = applyRope(a as tf.Tensor2D, heads, hd, t);
        return y;
      },
      [x],
    );
    x.dispose();
  });
});

/** Everything a trainer reads from a model, on the active backend. */
async function modelPaths(model: CausalLM, seed: number) {
  const rng = new SeededRng(seed);
  const V = model.config.vocabSize;
  const prompts = [randomIds(rng, 5, V), randomIds(rng, 3, V)];
  const actions = [randomIds(rng, 3, V), randomIds(rng, 4, V)];
  const logits = await model.logits([[...prompts[0]!, ...actions[0]!]]);
  // Teacher-forced log-probs and entropies, and every LoRA and value-head gradient.
  const features = await model.baseFeatures(prompts, actions);
  const vars = [...model.policyVariables(), ...model.valueVariables()];
  const { value, grads } = tf.variableGrads(() => {
    const s = model.tokenStats(prompts, actions);
    const v = model.values(features);
    const policy = tf.add(tf.neg(tf.sum(s.logProbs)), tf.mul(-0.01, tf.sum(s.entropies)));
    return tf.add(policy, tf.sum(tf.square(tf.sub(v, 0.5)))) as tf.Scalar;
  }, vars);
  const gradValues = await Promise.all(vars.map((v) => (grads[v.name] as tf.Tensor).data()));
  const loss = (await value.data())[0] as number;
  tf.dispose([value, ...Object.values(grads)]);
  const stats = model.tokenStats(prompts, actions);
  const logProbs = await stats.logProbs.data();
  const entropies = await stats.entropies.data();
  tf.dispose([stats.logProbs, stats.entropies]);
  // The label-tree restriction: two allowed ids per action token (the target and one other).
  const allowed = actions.map((a) => a.map((t) => [t, (t + 1) % V]));
  const restricted = await model.scoreTokens(prompts, actions, { allowed });
  // Prefix-shared candidate scoring and KV-cached generation.
  const cands = [[randomIds(rng, 2, V), randomIds(rng, 1, V), randomIds(rng, 3, V)]];
  const scores = await model.scoreContinuations([prompts[0]!], cands);
  const gen = await model.generate(prompts[1]!, { maxNewTokens: 6, temperature: 1, seed: 9 });
  const values = await model.tokenValues(prompts, actions);
  tf.dispose(features as unknown as tf.Tensor);
  return {
    logits,
    loss,
    gradValues,
    logProbs,
    entropies,
    restricted: restricted.logProbs.flat(),
    scores: scores.flat(2),
    genTokens: gen.tokens,
    genLogProbs: gen.logProbs,
    values: values.flat(),
  };
}

/** Losses of 20 Adam steps on LoRA and value head. */
async function trainingLosses(model: CausalLM): Promise<number[]> {
  const rng = new SeededRng(5);
  const V = model.config.vocabSize;
  const prompts = [randomIds(rng, 6, V), randomIds(rng, 4, V)];
  const actions = [randomIds(rng, 3, V), randomIds(rng, 2, V)];
  const features = await model.baseFeatures(prompts, actions);
  const policyOpt = tf.train.adam(1e-2);
  const valueOpt = tf.train.adam(1e-2);
  const losses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const l = policyOpt.minimize(
      () => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
      true,
      model.policyVariables(),
    );
    const lv = valueOpt.minimize(
      () => tf.mean(tf.square(tf.sub(model.values(features), 1))) as tf.Scalar,
      true,
      model.valueVariables(),
    );
    losses.push((await l!.data())[0] as number, (await lv!.data())[0] as number);
    tf.dispose([l!, lv!]);
  }
  tf.dispose([features as unknown as tf.Tensor]);
  policyOpt.dispose();
  valueOpt.dispose();
  return losses;
}

const CONFIGS: Array<[string, HFModelConfig | string]> = [
  ['the default model', DEFAULT_MODEL],
  ['random GQA llama', tinyConfig({ rope_theta: 500 })],
  [
    'random qwen2 (q/k/v biases, tied head)',
    tinyConfig({ model_type: 'qwen2', tie_word_embeddings: true }),
  ],
  ['random Llama 3 (head_dim 16 ≠ 32/4, llama3 rope scaling)', llama3Config()],
  ['random Qwen3 (q/k norms, head_dim 16, tied head)', qwen3Config()],
];

async function build(spec: HFModelConfig | string): Promise<CausalLM> {
  const opts = { seed: 3, lora: true, valueHead: { hiddenSizes: [16, 8] } };
  if (typeof spec === 'string') return loadCausalLM(spec, opts);
  return createCausalLM(spec, { ...opts, initStd: 0.2 });
}

describe.runIf(gpu.ok)('webgpu = wasm on every model path', () => {
  for (const [name, spec] of CONFIGS) {
    it(`logits, log-probs, entropies, LoRA and value-head gradients, restricted scores, prefix-shared scoring, cached generation (${name})`, async () => {
      const results = [];
      for (const backend of ['wasm', 'webgpu'] as const) {
        results.push(
          await on(backend, async () => {
            const model = await build(spec);
            const before = tf.memory().numTensors;
            const r = await modelPaths(model, 1);
            expect(tf.memory().numTensors, `${backend} leaks tensors`).toBe(before);
            model.dispose();
            return r;
          }),
        );
      }
      const [w, g] = results as [
        Awaited<ReturnType<typeof modelPaths>>,
        Awaited<ReturnType<typeof modelPaths>>,
      ];
      close(g.logits, w.logits, 1e-4, 'logits');
      close(g.logProbs, w.logProbs, 1e-4, 'log-probs');
      close(g.entropies, w.entropies, 1e-4, 'entropies');
      close([g.loss], [w.loss], 1e-4, 'loss');
      expect(g.gradValues.length).toBe(w.gradValues.length);
      g.gradValues.forEach((x, i) => {
        close(x, w.gradValues[i]!, 1e-4, `gradient ${i}`);
      });
      // At least one LoRA B gradient is non-zero, so the comparison is not vacuous.
      expect(w.gradValues.some((x) => x.some((v) => Math.abs(v) > 1e-6))).toBe(true);
      close(g.restricted, w.restricted, 1e-4, 'restricted log-probs');
      close(g.scores, w.scores, 1e-4, 'candidate scores');
      expect(g.genTokens).toEqual(w.genTokens);
      close(g.genLogProbs, w.genLogProbs, 1e-4, 'generated log-probs');
      close(g.values, w.values, 1e-4, 'values');
    });
  }

  it('20 LoRA + value-head Adam steps give the same losses (within 1e-4)', async () => {
    const runs: number[][] = [];
    for (const backend of ['wasm', 'webgpu'] as const) {
      runs.push(
        await on(backend, async () => {
          const model = await build(tinyConfig({ rope_theta: 500 }));
          const l = await trainingLosses(model);
          model.dispose();
          return l;
        }),
      );
    }
    const [w, g] = runs as [number[], number[]];
    expect(w[w.length - 2]!).toBeLessThan(w[0]! - 0.1); // it trains
    close(g, w, 1e-4, 'losses');
  });

  it('saves and reloads adapter and value head bit for bit on webgpu', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const model = await build(tinyConfig());
    await trainingLosses(model);
    const dir = await tempDir();
    await saveAdapter(model, dir);
    await saveValueHead(model, dir);
    const other = await build(tinyConfig());
    await loadAdapter(other, dir);
    await loadValueHead(other, dir);
    const a = await Promise.all(
      [...model.policyVariables(), ...model.valueVariables()].map((v) => v.data()),
    );
    const b = await Promise.all(
      [...other.policyVariables(), ...other.valueVariables()].map((v) => v.data()),
    );
    a.forEach((x, i) => {
      expect(maxAbsDiff(x, b[i]!)).toBe(0);
    });
    const ids = [[1, 2, 3, 4]];
    expect(maxAbsDiff(await model.logits(ids), await other.logits(ids))).toBe(0);
    model.dispose();
    other.dispose();
  });

  it('keeps frozen weights once (no cached transpose) and merges LoRA into them: the logits stay within 1e-5', async () => {
    const bytes: number[] = [];
    for (const backend of ['wasm', 'webgpu'] as const) {
      await on(backend, async () => {
        const before = tf.memory().numBytes;
        const model = await build(tinyConfig());
        bytes.push(tf.memory().numBytes - before);
        model.dispose();
      });
    }
    // wasm caches a transpose of every frozen linear weight; webgpu multiplies by it transposed.
    expect(bytes[1]!).toBeLessThan(bytes[0]! * 0.8);
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const model = await build(tinyConfig());
    await trainingLosses(model);
    const ids = [[3, 1, 4, 1, 5]];
    const withAdapter = await model.logits(ids);
    model.mergeAdapter();
    close(await model.logits(ids), withAdapter, 1e-5, 'merged logits');
    model.dispose();
  });
});
