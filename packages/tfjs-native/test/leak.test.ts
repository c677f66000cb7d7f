import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { getNativeAddon } from '../src/addon.js';
import {
  attention,
  isNativeAvailable,
  logProbStats,
  nativeUnavailableReason,
  registerNativeKernels,
  rmsNorm,
  swiGlu,
  unregisterNativeKernels,
} from '../src/index.js';
import { runNative, useWasm } from './helpers.js';
import { randomValues } from './values.js';

interface WasmHeapHolder {
  wasm: { HEAPU8: Uint8Array };
}

describe.runIf(runNative)('memory across 1,000 calls of each native kernel', () => {
  beforeAll(async () => {
    expect(isNativeAvailable(), nativeUnavailableReason() ?? '').toBe(true);
    await useWasm();
    expect(registerNativeKernels().kernels.length).toBeGreaterThan(0);
    return () => {
      unregisterNativeKernels();
    };
  });

  it('keeps the tensor count, the wasm heap and the JS heap flat', () => {
    const backend = tf.backend() as unknown as WasmHeapHolder;
    const a = tf.tensor(randomValues(2 * 48 * 64, 1), [2, 48, 64]);
    const b = tf.tensor(randomValues(64 * 32, 2), [64, 32]);
    const c = tf.tensor(randomValues(2 * 32 * 48, 3), [2, 32, 48]);
    const bias = tf.tensor(randomValues(32, 4), [32]);
    const w = tf.tensor1d(randomValues(64, 5));
    const flat = tf.tensor2d(randomValues(96 * 64, 6), [96, 64]);
    const targets = Int32Array.from({ length: 96 }, (_, i) => (i * 7) % 64);
    const rows = tf.tensor1d(targets, 'int32');
    const mask = tf.zeros([2, 48, 48]) as tf.Tensor3D;
    const attn = { batch: 2, heads: 4, kvHeads: 2 };
    const half = tf.slice(flat, [0, 0], [96, 32]) as tf.Tensor2D;
    const other = tf.slice(flat, [0, 32], [96, 32]) as tf.Tensor2D;
    const calls: (() => tf.Tensor)[] = [
      () => tf.matMul(a, b),
      () => tf.matMul(a, c, true, true),
      () => tf.fused.matMul({ a, b, bias, activation: 'relu' }),
      () => tf.exp(a),
      () => tf.softmax(a),
      () =>
        tf.getKernel('LogSoftmax', 'wasm')
          ? (tf.engine().runKernel('LogSoftmax', { logits: a }, { axis: -1 }) as tf.Tensor)
          : tf.logSoftmax(a),
      () => tf.gather(flat, rows),
      () => {
        const [p, q] = tf.split(flat, [24, 40], 1);
        const joined = tf.concat([q!, p!], 1);
        tf.dispose([p!, q!]);
        return joined;
      },
      () => tf.slice(a, [0, 5, 3], [2, 30, -1]),
      () => rmsNorm(a, w),
      () => swiGlu(a, a),
      () => {
        const s = logProbStats(flat, targets);
        s.entropies.dispose();
        return s.logProbs;
      },
      // forward and backward of the fused ops
      () => tf.grad((x: tf.Tensor) => tf.sum(swiGlu(rmsNorm(x, w), x)))(a),
      () =>
        tf.grad((x: tf.Tensor) => tf.sum(logProbStats(x as tf.Tensor2D, targets).entropies))(flat),
      () => attention(flat, half, other, mask, attn),
      () => {
        const [dq, dk, dv] = tf.grads((q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
          tf.sum(attention(q as tf.Tensor2D, k as tf.Tensor2D, v as tf.Tensor2D, mask, attn)),
        )([flat, half, other]);
        tf.dispose([dk!, dv!]);
        return dq!;
      },
    ];
    const round = (n: number) => {
      for (let i = 0; i < n; i++) for (const call of calls) call().dispose();
    };
    const collect = (globalThis as { gc?: () => void }).gc;
    expect(collect, 'run with --expose-gc (see vitest.config.ts)').toBeTypeOf('function');
    // Warm-up: the wasm heap settles at its working size.
    round(50);
    collect!();
    const tensors = tf.memory().numTensors;
    const heapBytes = backend.wasm.HEAPU8.byteLength;
    const jsHeap = process.memoryUsage().heapUsed;
    round(1000);
    collect!();
    expect(tf.memory().numTensors).toBe(tensors);
    expect(backend.wasm.HEAPU8.byteLength).toBe(heapBytes);
    expect(process.memoryUsage().heapUsed - jsHeap).toBeLessThan(4 * 2 ** 20);
    tf.dispose([a, b, c, bias, w, flat, rows, mask, half, other]);
  });

  it('the addon allocates nothing per call (process memory flat over 2,000 calls of each entry)', async () => {
    const addon = getNativeAddon()!;
    const collect = (globalThis as { gc?: () => void }).gc!;
    // A plain buffer stands in for the wasm heap; regions are placed at fixed offsets.
    const mem = new Uint8Array(64 * 2 ** 20);
    new Float32Array(mem.buffer).fill(0.25);
    new Int32Array(mem.buffer, 60 * 2 ** 20, 1024).fill(3);
    const MB = 2 ** 20;
    const ids = 60 * MB;
    const entries: (() => void)[] = [
      () => addon.gemm(mem, 0, MB, 2 * MB, 1, 64, 64, 64, false, true, 1, 1, null, null),
      () => addon.gemm(mem, 0, 4 * MB, 8 * MB, 1, 512, 512, 256, true, false, 1, 1, null, null),
      () => addon.gemm(mem, 0, MB, 2 * MB, 16, 32, 32, 32, false, false, 16, 16, null, null),
      () => addon.epilogue(mem, 2 * MB, 4096, 64, 0, 64, 4, 0.2, 0, 0),
      () => addon.exp(mem, 0, 16 * MB, 2 ** 20),
      () => addon.softmax(mem, 0, 16 * MB, 1024, 1024, false),
      () => addon.logProbStats(mem, 0, ids, 16 * MB, 17 * MB, 1024, 1024),
      () => addon.logProbStatsGrad(mem, 0, ids, 17 * MB, 16 * MB, 18 * MB, 20 * MB, 1024, 1024),
      () => addon.rmsNorm(mem, 0, MB, 16 * MB, 20 * MB, 1024, 256, 1e-6),
      () => addon.rmsNormGrad(mem, 0, MB, 20 * MB, 2 * MB, 16 * MB, 21 * MB, 1024, 256),
      () => addon.swiGlu(mem, 0, 4 * MB, 16 * MB, 2 ** 20),
      () => addon.swiGluGrad(mem, 0, 4 * MB, 8 * MB, 16 * MB, 24 * MB, 2 ** 20),
      () => addon.rope(mem, 0, 8 * MB, 9 * MB, 16 * MB, 1024, 4, 32, true),
      () => addon.attention(mem, 0, MB, 2 * MB, 3 * MB, 16 * MB, 20 * MB, 2, 64, 4, 2, 32, 0.2),
      () =>
        addon.attentionGrad(
          mem,
          0,
          MB,
          2 * MB,
          20 * MB,
          4 * MB,
          24 * MB,
          25 * MB,
          26 * MB,
          2,
          64,
          4,
          2,
          32,
          0.2,
        ),
    ];
    // Yields to the event loop now and then: a worker that blocks for a minute under load loses
    // its connection to the test runner.
    const run = async (n: number) => {
      for (let i = 0; i < n; i++) {
        for (const call of entries) call();
        if (i % 20 === 19) await new Promise((r) => setImmediate(r));
      }
    };
    await run(100);
    collect();
    const rss = process.memoryUsage().rss;
    await run(2000);
    collect();
    // 30,000 calls: a leak of even 256 bytes per call would show as 7.3 MiB.
    const grown = process.memoryUsage().rss - rss;
    expect(grown, `RSS grew by ${(grown / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(4 * 2 ** 20);
  });
});
