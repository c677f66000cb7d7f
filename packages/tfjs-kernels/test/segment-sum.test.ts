import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerGradients } from '../src/gradients.js';
import { registerSegmentSumKernel } from '../src/segment-sum.js';
import { randomValues } from './helpers.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await import('@tensorflow/tfjs-backend-wasm');
  registerGradients();
});

/** Σ of the rows of x [ids.length, width] per segment, by a plain loop (ids outside are dropped). */
function segmentSumLoop(x: Float32Array, ids: number[], width: number, segments: number) {
  const out = new Float32Array(segments * width);
  ids.forEach((s, i) => {
    if (s < 0 || s >= segments) return;
    for (let j = 0; j < width; j++)
      out[s * width + j] = (out[s * width + j] as number) + (x[i * width + j] as number);
  });
  return out;
}

describe('the row-scatter UnsortedSegmentSum kernel', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`on ${backend}: sums rows per segment as a plain loop does, in one pass`, async () => {
      await tf.setBackend(backend);
      registerSegmentSumKernel(backend);
      const ids = [3, 0, 3, 5, 1, 0, 3];
      const x = randomValues(ids.length * 4, 7);
      const before = tf.memory().numTensors;
      const got = tf.tidy(() =>
        tf
          .unsortedSegmentSum(tf.tensor2d(x, [ids.length, 4]), tf.tensor1d(ids, 'int32'), 6)
          .dataSync(),
      );
      expect(Array.from(got)).toEqual(Array.from(segmentSumLoop(x, ids, 4, 6)));
      expect(tf.memory().numTensors).toBe(before);
    });
  }

  it('gives the embedding gradient (gather) the same values on cpu and wasm', async () => {
    const table = randomValues(30 * 8, 3);
    const rows = [1, 2, 2, 29, 0, 2];
    const weights = randomValues(rows.length * 8, 4);
    const grads: Float32Array[] = [];
    for (const backend of ['cpu', 'wasm'] as const) {
      await tf.setBackend(backend);
      registerSegmentSumKernel(backend);
      grads.push(
        tf.tidy(() => {
          const w = tf.tensor2d(weights, [rows.length, 8]);
          const f = (t: tf.Tensor) =>
            tf.sum(tf.mul(tf.gather(t, tf.tensor1d(rows, 'int32')), w)) as tf.Scalar;
          return tf
            .grad(f)(tf.tensor2d(table, [30, 8]))
            .dataSync() as Float32Array;
        }),
      );
    }
    const [cpu, wasm] = grads as [Float32Array, Float32Array];
    expect(cpu.some((v) => v !== 0)).toBe(true);
    for (let i = 0; i < cpu.length; i++) expect(Math.abs(cpu[i]! - wasm[i]!)).toBeLessThan(1e-6);
  });
});
