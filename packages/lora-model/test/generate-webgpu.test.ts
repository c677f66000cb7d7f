/**
 * Generation on webgpu with the device loop (sampling on the GPU, ids read every
 * `stopCheckEvery` tokens, a preallocated cache written in place) against the host loop on the
 * same backend (`sampleOnDevice: false`: logits read and sampled on the host every token), and
 * its GPU work counted at the device. Runs where Dawn finds an adapter (lavapipe will do); under
 * CI it must find one, so a missing adapter fails instead of skipping.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import {
  activeFusedOps,
  gpuCounters,
  gpuCountersSince,
  initBackend,
  releaseBackend,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import type { GenerateBatchOptions, GenerateResult } from '../src/generate.js';
import { SeededRng } from '../src/rng.js';
import { logSoftmaxAt, sampleToken } from '../src/sampling.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff } from './helpers.js';

// A software adapter compiles every shader on first use: seconds per test.
vi.setConfig({ testTimeout: 300_000 });

const gpu = await webGpuTestFile('webgpu generation tests', { initBackend, releaseBackend });

const V = 61;
const PROMPTS = [
  [3, 14, 15, 9, 2, 6, 5],
  [35, 8],
  [9, 7, 9, 3, 2, 38, 4, 6, 26, 43, 3],
];
const SEEDS = [101, 202, 303];

function tinyModel(): CausalLM {
  return createCausalLM(tinyConfig({ rope_theta: 300 }), { seed: 17, initStd: 0.3 });
}

/** Same tokens and stop flags; log-probs within `tol`. */
function expectSame(a: GenerateResult[], b: GenerateResult[], tol: number, what: string): void {
  expect(a.length).toBe(b.length);
  a.forEach((r, i) => {
    const e = b[i]!;
    expect(r.tokens, `${what}, row ${i}`).toEqual(e.tokens);
    expect(r.stopped, `${what}, row ${i}`).toBe(e.stopped);
    expect(maxAbsDiff(r.logProbs, e.logProbs), `${what}, row ${i}`).toBeLessThan(tol);
    expect(maxAbsDiff(r.samplerLogProbs, e.samplerLogProbs), `${what}, row ${i}`).toBeLessThan(tol);
  });
}

/** The device loop, reading ids every `every` tokens, generates what the host loop generates. */
async function expectDeviceLoopAsHost(
  model: CausalLM,
  o: GenerateBatchOptions,
  every: number,
  what: string,
): Promise<void> {
  expectSame(
    await model.generateBatch(PROMPTS, { ...o, stopCheckEvery: every }),
    await model.generateBatch(PROMPTS, { ...o, sampleOnDevice: false }),
    1e-4,
    what,
  );
}

describe.runIf(gpu.ok)('the GPU sampler against sampleToken', () => {
  it('draws the same ids from the same logits and uniforms (greedy, T 0.7 top-5, T 1, ties)', async () => {
    const sample = activeFusedOps()?.sampleTokens;
    expect(sample, 'the webgpu fused ops have sampleTokens').toBeDefined();
    const rows = 24;
    const rng = new SeededRng(5);
    const z = new Float32Array(rows * V);
    for (let i = 0; i < z.length; i++) z[i] = rng.normal() * 2;
    // Ties: rounded logits in rows 0–7 (many equal values), one row all equal, one with two
    // equal maxima.
    for (let i = 0; i < 8 * V; i++) z[i] = Math.round(z[i]! * 2) / 2;
    z.fill(0.25, 8 * V, 9 * V);
    z[9 * V + 4] = 7;
    z[9 * V + 40] = 7;
    for (const opts of [
      { temperature: 0 },
      { temperature: 0.7, topK: 5 },
      { temperature: 1 },
      { temperature: 1.5, topK: 2 },
    ]) {
      // Each row's generator, twice: one for the host sampler, one for the uniforms uploaded.
      const host = Array.from({ length: rows }, (_, r) => new SeededRng(1000 + r));
      const dev = Array.from({ length: rows }, (_, r) => new SeededRng(1000 + r));
      for (let round = 0; round < 3; round++) {
        const u = Int32Array.from(dev, (g) =>
          opts.temperature > 0 ? (g.next() * 2 ** 32) | 0 : 0,
        );
        const before = tf.memory().numTensors;
        const logits = tf.tensor2d(z, [rows, V]);
        const uT = tf.tensor1d(u, 'int32');
        const { ids, record } = sample!(logits, uT, {
          temperature: opts.temperature,
          topK: opts.topK ?? 0,
        });
        const rec = new Int32Array((await record.data()) as Int32Array);
        tf.dispose([logits, uT, ids, record]);
        expect(tf.memory().numTensors).toBe(before);
        const f = new Float32Array(rec.buffer);
        for (let r = 0; r < rows; r++) {
          const row = z.subarray(r * V, (r + 1) * V);
          const want = sampleToken(row, opts, host[r]!);
          const what = `${JSON.stringify(opts)}, round ${round}, row ${r}`;
          expect(rec[r], what).toBe(want.token);
          expect(Math.abs(f[rows + r]! - logSoftmaxAt(row, want.token)), what).toBeLessThan(1e-5);
          expect(Math.abs(f[2 * rows + r]! - want.samplerLogProb), what).toBeLessThan(1e-5);
        }
      }
      // As many draws on both sides: the streams are still in step.
      expect(host.map((g) => g.next())).toEqual(dev.map((g) => g.next()));
    }
  });
});

describe.runIf(gpu.ok)('generateBatch with the device loop', () => {
  it('gives the host loop’s tokens for every stopCheckEvery, run after run, without leaks', async () => {
    const model = tinyModel();
    const base: GenerateBatchOptions = { maxNewTokens: 12, temperature: 0.9, seeds: SEEDS };
    const free = await model.generateBatch(PROMPTS, { ...base, sampleOnDevice: false });
    // A stop id that ends row 1 early and occurs in no other row's free run.
    const stop = free[1]!.tokens
      .slice(1, 8)
      .find((t) => [0, 2].every((i) => !free[i]!.tokens.includes(t)));
    expect(
      stop,
      `a stop id for row 1 in ${JSON.stringify(free.map((r) => r.tokens))}`,
    ).toBeDefined();
    const opts = { ...base, stopTokenIds: [stop!] };
    const host = await model.generateBatch(PROMPTS, { ...opts, sampleOnDevice: false });
    expect(host[1]!.stopped).toBe(true);
    expect(host[1]!.tokens.length).toBeLessThan(12);
    expect(host[0]!.tokens.length).toBe(12);
    for (const every of [1, 4, 7]) {
      for (let run = 0; run < 2; run++) {
        const before = tf.memory().numTensors;
        const dev = await model.generateBatch(PROMPTS, { ...opts, stopCheckEvery: every });
        expect(tf.memory().numTensors).toBe(before);
        expectSame(dev, host, 1e-4, `stopCheckEvery ${every}, run ${run}`);
      }
    }
    // Greedy with top-k, and a single prompt through generate.
    const greedy = { maxNewTokens: 9, temperature: 0, seeds: SEEDS };
    await expectDeviceLoopAsHost(model, greedy, 4, 'greedy');
    const one = { maxNewTokens: 7, temperature: 0.7, topK: 5, seed: 4 };
    expectSame(
      [await model.generate(PROMPTS[2]!, { ...one, stopCheckEvery: 3 })],
      [await model.generate(PROMPTS[2]!, { ...one, sampleOnDevice: false })],
      1e-4,
      'generate, top-5',
    );
    model.dispose();
    // bfloat16 weights (the embedding lookup of the drawn ids is the packed gather), tied head.
    const packed = createCausalLM(tinyConfig({ tie_word_embeddings: true }), {
      seed: 2,
      weightDtype: 'bfloat16',
      initStd: 0.3,
    });
    const p = { maxNewTokens: 6, temperature: 1, seeds: SEEDS };
    await expectDeviceLoopAsHost(packed, p, 2, 'bfloat16');
    packed.dispose();
  });

  it('reads ⌈tokens / stopCheckEvery⌉ times and dispatches as many programs per step at step 2 as at step 20', async () => {
    const model = tinyModel();
    const work = async (maxNewTokens: number, extra: GenerateBatchOptions) => {
      const before = gpuCounters()!;
      const out = await model.generateBatch(PROMPTS, {
        maxNewTokens,
        temperature: 1,
        seeds: SEEDS,
        ...extra,
      });
      expect(out.every((r) => r.tokens.length === maxNewTokens)).toBe(true);
      return gpuCountersSince(before, gpuCounters()!);
    };
    // Warm: shaders compiled, buffers pooled.
    await work(3, {});
    await work(3, { sampleOnDevice: false });
    const M = 20;
    const counts: Record<string, { reads: number; programs: number }> = {};
    for (const every of [1, 4, 7, 20]) {
      const w = await work(M, { stopCheckEvery: every });
      // Nothing read before the first draw or after the last: the reads are the checks.
      expect(w.reads, `stopCheckEvery ${every}`).toBe(Math.ceil(M / every));
      counts[`every ${every}`] = { reads: w.reads, programs: w.programs };
    }
    // Programs of one more token at step 2 and at step 20: the same (no growing cache to
    // concatenate or compact), on the device loop; the host loop for comparison.
    const step = async (m: number, extra: GenerateBatchOptions) =>
      (await work(m + 1, extra)).programs - (await work(m, extra)).programs;
    const device2 = await step(2, { stopCheckEvery: 32 });
    const device20 = await step(20, { stopCheckEvery: 32 });
    const host2 = await step(2, { sampleOnDevice: false });
    const host20 = await step(20, { sampleOnDevice: false });
    const hostReads = (await work(M, { sampleOnDevice: false })).reads;
    // A step is the sampler's one program and a one-token pass over the same rows as if there
    // were no cache at all (its attention one program a layer too): no copy, concatenation or
    // gather of the cache is a program.
    const plain = () =>
      tf.tidy(() =>
        model.head(
          model.forward({ ids: new Int32Array(3), batch: 3, seq: 1, noGrad: true }).hidden,
        ),
      );
    plain().dispose();
    const start = gpuCounters()!;
    plain().dispose();
    const onePass = gpuCountersSince(start, gpuCounters()!).programs;
    console.info(
      JSON.stringify({
        tokens: M,
        counts,
        perStep: { device2, device20, host2, host20, onePass },
        hostReads,
      }),
    );
    expect(device20).toBe(device2);
    expect(device2).toBe(onePass + 1);
    expect(device2).toBeLessThan(host2);
    expect(hostReads).toBe(M);
    model.dispose();
  });
});
