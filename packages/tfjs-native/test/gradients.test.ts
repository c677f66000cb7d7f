import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isNativeAvailable,
  nativeUnavailableReason,
  unregisterNativeKernels,
} from '../src/index.js';
import { randomValues, runNative, useWasm, withNative, withStock, worstRatio } from './helpers.js';

/** Gradients of sum(f(inputs) · w) for a fixed seeded weight w, as flat arrays. */
function gradsOf(
  f: (...xs: tf.Tensor[]) => tf.Tensor,
  inputs: { shape: number[]; values: Float32Array }[],
  seed: number,
): Float32Array[] {
  return tf.tidy(() => {
    const xs = inputs.map((x) => tf.tensor(x.values, x.shape));
    const g = tf.grads((...args: tf.Tensor[]) => {
      const y = f(...args);
      const w = tf.tensor(randomValues(y.size, seed), y.shape);
      return tf.sum(tf.mul(y, w));
    });
    return g(xs).map((t) => t.dataSync().slice() as Float32Array);
  });
}

function input(shape: number[], seed: number, scale = 1) {
  return {
    shape,
    values: randomValues(
      shape.reduce((p, d) => p * d, 1),
      seed,
      scale,
    ),
  };
}

function sameGrads(
  f: (...xs: tf.Tensor[]) => tf.Tensor,
  inputs: ReturnType<typeof input>[],
  seed: number,
  atol: number,
) {
  const stock = withStock(() => gradsOf(f, inputs, seed));
  const native = withNative(() => gradsOf(f, inputs, seed));
  expect(native.length).toBe(stock.length);
  native.forEach((g, i) => {
    expect(worstRatio(g, stock[i]!, atol, 1e-5)).toBeLessThanOrEqual(1);
  });
}

describe.runIf(runNative)('gradients through native kernels', () => {
  beforeAll(async () => {
    expect(isNativeAvailable(), nativeUnavailableReason() ?? '').toBe(true);
    await useWasm();
    return () => {
      unregisterNativeKernels();
    };
  });

  it('matMul gradients equal the stock ones for every transpose (rank 2 and equal batches)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (m, n, k, batch, tA, tB, seed) => {
          const lead = batch === 0 ? [] : [batch];
          const a = input([...lead, ...(tA ? [k, m] : [m, k])], seed);
          const b = input([...lead, ...(tB ? [n, k] : [k, n])], seed + 1);
          sameGrads(
            (x, y) => tf.matMul(x!, y!, tA, tB),
            [a, b],
            seed + 2,
            2e-6 * Math.max(m, n, k),
          );
        },
      ),
      { numRuns: 150, seed: 41 },
    );
  });

  it('fused matMul (bias + relu) gradients equal the stock ones', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('linear', 'relu', 'sigmoid') as fc.Arbitrary<'linear' | 'relu' | 'sigmoid'>,
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (m, n, k, activation, seed) => {
          const a = input([m, k], seed);
          const b = input([k, n], seed + 1);
          const bias = input([n], seed + 2);
          sameGrads(
            (x, y, z) => tf.fused.matMul({ a: x!, b: y!, bias: z, activation }),
            [a, b, bias],
            seed + 3,
            2e-6 * k,
          );
        },
      ),
      { numRuns: 100, seed: 42 },
    );
  });

  it('softmax, logSoftmax and exp gradients equal the stock ones', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const x = input([rows, cols], seed, 5);
          sameGrads((t) => tf.softmax(t!), [x], seed + 1, 1e-6);
          sameGrads((t) => tf.logSoftmax(t!), [x], seed + 2, 1e-5);
          sameGrads((t) => tf.exp(t!), [x], seed + 3, 1e-5);
        },
      ),
      { numRuns: 100, seed: 43 },
    );
  });
});
