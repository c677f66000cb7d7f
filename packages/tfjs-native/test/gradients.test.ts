import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeNative, stockAndNative } from './helpers.js';
import { dimArb, evaluate, expectClose, randomInput, seedArb } from './values.js';

/** Stock and native values and gradients of `f` agree within `atol + 1e-5·|stock|`. */
function sameGrads(
  f: (...xs: tf.Tensor[]) => tf.Tensor,
  inputs: ReturnType<typeof randomInput>[],
  seed: number,
  atol: number,
) {
  const outputs = (xs: tf.Tensor[]) => [f(...xs)];
  const { stock, native } = stockAndNative(() => evaluate(outputs, inputs, seed));
  expect(native.grads.length).toBe(stock.grads.length);
  expectClose(native, stock, atol, 1e-5);
}

describeNative('gradients through native kernels', () => {
  it('matMul gradients equal the stock ones for every transpose (rank 2 and equal batches)', () => {
    fc.assert(
      fc.property(
        dimArb(7),
        dimArb(7),
        dimArb(9),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        seedArb,
        (m, n, k, batch, tA, tB, seed) => {
          const lead = batch === 0 ? [] : [batch];
          const a = randomInput([...lead, ...(tA ? [k, m] : [m, k])], seed);
          const b = randomInput([...lead, ...(tB ? [n, k] : [k, n])], seed + 1);
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
        dimArb(7),
        dimArb(7),
        dimArb(9),
        fc.constantFrom('linear', 'relu', 'sigmoid') as fc.Arbitrary<'linear' | 'relu' | 'sigmoid'>,
        seedArb,
        (m, n, k, activation, seed) => {
          const a = randomInput([m, k], seed);
          const b = randomInput([k, n], seed + 1);
          const bias = randomInput([n], seed + 2);
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
      fc.property(dimArb(6), dimArb(40), seedArb, (rows, cols, seed) => {
        const x = randomInput([rows, cols], seed, 5);
        sameGrads((t) => tf.softmax(t!), [x], seed + 1, 1e-6);
        sameGrads((t) => tf.logSoftmax(t!), [x], seed + 2, 1e-5);
        sameGrads((t) => tf.exp(t!), [x], seed + 3, 1e-5);
      }),
      { numRuns: 100, seed: 43 },
    );
  });
});
