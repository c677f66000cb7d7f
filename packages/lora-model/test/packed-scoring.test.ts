/**
 * Candidate scoring on webgpu, where prompts and candidates run packed in one pass (the fused
 * `rangeAttention` of @poad/tfjs-kernels), against full-sequence scoring of every prompt +
 * candidate (`prefixSharing: false`) on the same backend and against the KV-cache path on wasm.
 * Runs where Dawn finds an adapter; under CI (which installs lavapipe) it must find one.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import {
  gpuCounters,
  gpuCountersSince,
  initBackend,
  releaseBackend,
  setFusedOps,
  webGpuFusedOps,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import { SeededRng } from '../src/rng.js';
import { qwen3Config, tinyConfig } from './configs.js';
import { randomIds, twosomeObjective } from './helpers.js';

vi.setConfig({ testTimeout: 120_000 });

const gpu = await webGpuTestFile('packed scoring tests', { initBackend, releaseBackend });

/** Prompts of different lengths; candidates of one to four tokens; a prompt with none. */
function task(V: number) {
  const rng = new SeededRng(11);
  const prompts = [randomIds(rng, 7, V), randomIds(rng, 3, V), randomIds(rng, 5, V), [4]];
  const cands = [
    [randomIds(rng, 1, V), randomIds(rng, 4, V), randomIds(rng, 2, V)],
    [randomIds(rng, 3, V)],
    [],
    [randomIds(rng, 2, V), randomIds(rng, 1, V)],
  ];
  return { prompts, cands };
}

async function scores(model: CausalLM, prefixSharing: boolean) {
  const { prompts, cands } = task(model.config.vocabSize);
  return model.scoreContinuations(prompts, cands, { prefixSharing });
}

function close(a: number[][][], b: number[][][], tol: number): void {
  expect(a.map((x) => x.map((y) => y.length))).toEqual(b.map((x) => x.map((y) => y.length)));
  const fa = a.flat(2);
  const fb = b.flat(2);
  expect(fa.length).toBeGreaterThan(10);
  fa.forEach((v, i) => {
    expect(Math.abs(v - fb[i]!), `entry ${i}: ${v} vs ${fb[i]}`).toBeLessThanOrEqual(tol);
  });
}

const MODELS: [string, Parameters<typeof createCausalLM>[0]][] = [
  ['GQA llama', tinyConfig({ rope_theta: 500 })],
  ['qwen3 (q/k norms, head_dim 16)', qwen3Config()],
];

describe('packed candidate scoring', () => {
  for (const [name, config] of MODELS) {
    it.runIf(gpu.ok)(
      `equals full-sequence scoring and the wasm KV-cache path (${name})`,
      async () => {
        await initBackend('webgpu', { allowSoftwareAdapter: true });
        const model = createCausalLM(config, { seed: 3, lora: true, initStd: 0.2 });
        const live = tf.memory().numTensors;
        const packed = await scores(model, true);
        const full = await scores(model, false);
        expect(tf.memory().numTensors).toBe(live);
        close(packed, full, 1e-4);
        model.dispose();
        await initBackend('wasm');
        const onWasm = createCausalLM(config, { seed: 3, lora: true, initStd: 0.2 });
        // The same random weights on both backends (the seed draws them on the host).
        close(packed, await scores(onWasm, true), 1e-4);
        onWasm.dispose();
      },
    );
  }

  it.runIf(gpu.ok)(
    'the differentiable form (a TWOSOME update) equals full-sequence tokenStats: values and LoRA gradients',
    async () => {
      await initBackend('webgpu', { allowSoftwareAdapter: true });
      const { prompts, cands } = task(tinyConfig().vocab_size);
      const objective = twosomeObjective(prompts, cands);
      const { model, vars, weights } = objective;
      const live = tf.memory().numTensors;
      const packed = objective.shared();
      const full = objective.full();
      const [a, b] = await Promise.all([packed.value.data(), full.value.data()]);
      expect(Math.abs(a[0]! - b[0]!)).toBeLessThan(1e-4);
      let nonZero = false;
      for (const v of vars) {
        const [ga, gb] = await Promise.all([
          packed.grads[v.name]!.data(),
          full.grads[v.name]!.data(),
        ]);
        let scale = 1;
        for (const x of gb) scale = Math.max(scale, Math.abs(x));
        ga.forEach((x, i) => {
          expect(Math.abs(x - gb[i]!) / scale, `${v.name}[${i}]`).toBeLessThan(1e-4);
          if (x !== 0) nonZero = true;
        });
      }
      expect(nonZero).toBe(true);
      tf.dispose([
        packed.value,
        full.value,
        ...Object.values(packed.grads),
        ...Object.values(full.grads),
      ]);
      expect(tf.memory().numTensors).toBe(live);
      weights.dispose();
      model.dispose();
    },
  );

  it.runIf(gpu.ok)(
    'takes one attention program per layer and one read, whatever the candidates',
    async () => {
      await initBackend('webgpu', { allowSoftwareAdapter: true });
      const model = createCausalLM(tinyConfig({}), { seed: 3, lora: true, initStd: 0.2 });
      const V = model.config.vocabSize;
      const count = async (nCands: number) => {
        const rng = new SeededRng(5);
        const prompts = [randomIds(rng, 6, V), randomIds(rng, 4, V)];
        const cands = prompts.map(() =>
          Array.from({ length: nCands }, (_, j) => randomIds(rng, 1 + (j % 3), V)),
        );
        await model.scoreContinuations(prompts, cands);
        const before = gpuCounters()!;
        await model.scoreContinuations(prompts, cands);
        return gpuCountersSince(before, gpuCounters()!);
      };
      const few = await count(2);
      const many = await count(9);
      expect(few.reads).toBe(1);
      expect(many.reads).toBe(1);
      expect(many.programs).toBe(few.programs);
      // Without the fused ops' range attention the prompts run first, then the candidates.
      const ops = webGpuFusedOps;
      setFusedOps({ ...ops, rangeAttention: undefined }, 'webgpu');
      try {
        const twoPass = await count(2);
        expect(few.programs).toBeLessThan(twoPass.programs * 0.7);
      } finally {
        setFusedOps(ops, 'webgpu');
      }
      model.dispose();
    },
  );
});
