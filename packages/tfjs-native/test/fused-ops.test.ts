import { logProbStatsGradientF64 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  logProbStats,
  rmsNorm,
  rotaryEmbedding,
  swiGlu,
  unregisterNativeKernels,
} from '../src/index.js';
import { describeNative, stockAndNative, useWasm, withNative, withStock } from './helpers.js';
import {
  dimArb,
  evaluate,
  expectClose,
  randomInput,
  randomValues,
  seedArb,
  worstRatio,
} from './values.js';

function usedKernels(fn: () => void): Promise<string[]> {
  return tf.profile(fn).then((info) => info.kernels.map((k) => k.name));
}

describe('fused ops without native kernels', () => {
  beforeAll(async () => {
    await useWasm();
  });

  it('logProbStats matches hand-computed values', () => {
    withStock(() => {
      const { logProbs, entropies } = logProbStats(
        tf.tensor2d([0, Math.log(3), 0, 0], [2, 2]),
        Int32Array.from([1, 0]),
      );
      const lp = logProbs.dataSync();
      const h = entropies.dataSync();
      expect(lp[0]).toBeCloseTo(Math.log(0.75), 6);
      expect(lp[1]).toBeCloseTo(Math.log(0.5), 6);
      expect(h[0]).toBeCloseTo(-(0.25 * Math.log(0.25) + 0.75 * Math.log(0.75)), 6);
      expect(h[1]).toBeCloseTo(Math.log(2), 6);
      tf.dispose([logProbs, entropies]);
    });
  });

  it('logProbStats gradients equal float64 central differences of the definition', () => {
    fc.assert(
      fc.property(dimArb(5), fc.integer({ min: 2, max: 40 }), seedArb, (rows, cols, seed) => {
        const z = randomInput([rows, cols], seed, 4);
        const targets = Int32Array.from({ length: rows }, (_, i) => (seed + i * 7) % cols);
        const w = [randomValues(rows, seed), randomValues(rows, seed + 1)];
        const analytic = withStock(() =>
          tf.tidy(() =>
            tf
              .grad((x: tf.Tensor) => {
                const s = logProbStats(x as tf.Tensor2D, targets);
                return tf.add(
                  tf.sum(tf.mul(s.logProbs, w[0]!)),
                  tf.sum(tf.mul(s.entropies, w[1]!)),
                ) as tf.Scalar;
              })(tf.tensor(z.values, z.shape))
              .dataSync(),
          ),
        );
        const numeric = logProbStatsGradientF64(z.values, rows, cols, targets, w[0]!, w[1]!);
        expect(worstRatio(analytic, numeric, 1e-4, 1e-4)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 100, seed: 50 },
    );
  });

  it('rejects mismatched shapes with clear errors', () => {
    const z = tf.zeros([3, 4]) as tf.Tensor2D;
    expect(() => logProbStats(z, Int32Array.from([0, 1]))).toThrow(/2 targets for 3 rows/);
    expect(() => rmsNorm(z, tf.ones([3]) as tf.Tensor1D)).toThrow(/weight \[3\].*\[3,4\]/);
    z.dispose();
  });
});

describeNative('fused ops with native kernels', () => {
  it('logProbStats: native values and gradients equal the TF.js ops (incl. invalid targets)', () => {
    const before = tf.memory().numTensors;
    fc.assert(
      fc.property(
        dimArb(6),
        // (The TF.js ops' tf.oneHot needs a depth of 2 or more.)
        fc.integer({ min: 2, max: 300 }),
        fc.double({ min: 0.1, max: 30, noNaN: true }),
        seedArb,
        (rows, cols, scale, seed) => {
          const z = randomInput([rows, cols], seed, scale);
          const targets = Int32Array.from({ length: rows }, (_, i) =>
            i === 0 && seed % 5 === 0
              ? -1
              : i === 1 && seed % 7 === 0
                ? cols
                : (seed + i * 13) % cols,
          );
          const f = (xs: tf.Tensor[]) => {
            const s = logProbStats(xs[0] as tf.Tensor2D, targets);
            return [s.logProbs, s.entropies];
          };
          const { stock: reference, native } = stockAndNative(() => evaluate(f, [z], seed + 1));
          expectClose({ values: native.values, grads: [] }, reference, 1e-5, 1e-5);
          // A row without a target has log-probability 0 on both paths, but the native backward
          // pass gives it the gradient of z_t − lse (−p) where TF.js differentiates the 0: the
          // gradients are compared with such rows' log-probabilities left out of the loss.
          const valid = Float32Array.from(targets, (t) => (t >= 0 && t < cols ? 1 : 0));
          const g = (xs: tf.Tensor[]) => {
            const s = logProbStats(xs[0] as tf.Tensor2D, targets);
            return [tf.mul(s.logProbs, valid), s.entropies];
          };
          const { stock: referenceGrads, native: nativeGrads } = stockAndNative(() =>
            evaluate(g, [z], seed + 1),
          );
          expectClose(nativeGrads, referenceGrads, 1e-5, 1e-5);
        },
      ),
      { numRuns: 150, seed: 51 },
    );
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rmsNorm: native values and gradients (x and weight) equal the TF.js ops', () => {
    fc.assert(
      fc.property(
        fc.array(dimArb(5), { minLength: 0, maxLength: 2 }),
        dimArb(80),
        fc.double({ min: 0.01, max: 10, noNaN: true }),
        seedArb,
        (lead, d, scale, seed) => {
          const x = randomInput([...lead, d], seed, scale);
          const w = randomInput([d], seed + 1, 2);
          const f = (xs: tf.Tensor[]) => [rmsNorm(xs[0]!, xs[1] as tf.Tensor1D, 1e-5)];
          const { stock: reference, native } = stockAndNative(() => evaluate(f, [x, w], seed + 2));
          expectClose(native, reference, 2e-5, 2e-5);
        },
      ),
      { numRuns: 150, seed: 52 },
    );
  });

  it('swiGlu: native values and gradients equal the TF.js ops', () => {
    fc.assert(
      fc.property(
        fc.array(dimArb(7), { minLength: 1, maxLength: 3 }),
        fc.double({ min: 0.01, max: 20, noNaN: true }),
        seedArb,
        (shape, scale, seed) => {
          const g = randomInput(shape, seed, scale);
          const u = randomInput(shape, seed + 1, 2);
          const f = (xs: tf.Tensor[]) => [swiGlu(xs[0]!, xs[1]!)];
          const { stock: reference, native } = stockAndNative(() => evaluate(f, [g, u], seed + 2));
          expectClose(native, reference, 1e-5, 1e-5);
        },
      ),
      { numRuns: 150, seed: 53 },
    );
  });

  it('rotaryEmbedding: native values and gradients equal the TF.js ops', () => {
    fc.assert(
      fc.property(dimArb(9), dimArb(4), dimArb(12), seedArb, (rows, heads, half, seed) => {
        const x = randomInput([rows, heads * 2 * half], seed, 3);
        const angles = randomValues(rows * half, seed + 1, 10);
        const cos = Float32Array.from(angles, Math.cos);
        const sin = Float32Array.from(angles, Math.sin);
        const f = (xs: tf.Tensor[]) => [
          rotaryEmbedding(
            xs[0] as tf.Tensor2D,
            tf.tensor2d(cos, [rows, half]),
            tf.tensor2d(sin, [rows, half]),
            heads,
          ),
        ];
        const { stock: reference, native } = stockAndNative(() => evaluate(f, [x], seed + 2));
        expectClose(native, reference, 1e-5, 1e-5);
      }),
      { numRuns: 150, seed: 54 },
    );
  });

  it('rotaryEmbedding rotates each half-pair by its angle (hand-computed)', () => {
    withNative(() => {
      // one head of size 4: pairs (x0, x2) and (x1, x3), angles 90° and 0°
      const y = rotaryEmbedding(
        tf.tensor2d([1, 2, 3, 4], [1, 4]),
        tf.tensor2d([0, 1], [1, 2]),
        tf.tensor2d([1, 0], [1, 2]),
        1,
      );
      const v = Array.from(y.dataSync()).map((a) => Math.round(a * 1e6) / 1e6);
      expect(v).toEqual([-3, 2, 1, 4]);
      y.dispose();
    });
  });

  it('runs the native kernels when registered and TF.js ops when not', async () => {
    const x = tf.tensor2d(randomValues(12, 3), [3, 4]);
    const w = tf.ones([4]) as tf.Tensor1D;
    const run = () => {
      tf.tidy(() => {
        rmsNorm(x, w);
        swiGlu(x, x);
        logProbStats(x, Int32Array.from([0, 1, 2]));
        rotaryEmbedding(x, tf.ones([3, 2]), tf.zeros([3, 2]), 1);
      });
    };
    const nativeNames = await withNative(() => usedKernels(run));
    expect(nativeNames).toEqual(
      expect.arrayContaining(['PoadRmsNorm', 'PoadSwiGlu', 'PoadLogProbStats', 'PoadRope']),
    );
    unregisterNativeKernels();
    const stockNames = await usedKernels(run);
    expect(stockNames.some((n) => n.startsWith('Poad'))).toBe(false);
    tf.dispose([x, w]);
  });
});
