import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeNative, stockAndNative, withNative, withStock } from './helpers.js';
import { dimArb, randomInput, randomValues, seedArb, worstRatio } from './values.js';

const shapeArb = fc.array(dimArb(6), { minLength: 0, maxLength: 3 });

/** Inputs of the row kernels: up to two leading axes of 1 to 5 and rows of 1 to 300 values. */
const rowsArb = fc
  .tuple(
    fc.array(dimArb(5), { minLength: 0, maxLength: 2 }),
    dimArb(300),
    fc.double({ min: 0.01, max: 60, noNaN: true }),
    seedArb,
  )
  .map(([lead, cols, scale, seed]) => randomInput([...lead, cols], seed, scale));

function values(fn: () => tf.Tensor): { shape: number[]; values: Float32Array } {
  return tf.tidy(() => {
    const out = fn();
    return { shape: out.shape, values: out.dataSync().slice() as Float32Array };
  });
}

describeNative('native Exp, Softmax, LogSoftmax', () => {
  it('Exp equals the stock kernel, including NaN, ±Inf, overflow and subnormal results', () => {
    const special = [
      Number.NaN,
      Infinity,
      -Infinity,
      0,
      -0,
      88.7,
      88.8,
      89,
      100,
      -87.3,
      -100,
      -103.9,
      -104,
      -200,
    ];
    const x = Float32Array.from(special);
    const { stock, native } = stockAndNative(() => values(() => tf.exp(tf.tensor1d(x))));
    expect(worstRatio(native.values, stock.values, 3e-45, 2e-7)).toBeLessThanOrEqual(1);
    expect(native.values[1]).toBe(Infinity);
    expect(native.values[2]).toBe(0);
    expect(native.values[11]).toBeGreaterThan(0); // subnormal, not flushed to zero
  });

  it('Exp equals the stock kernel on generated shapes and values', () => {
    fc.assert(
      fc.property(
        shapeArb,
        fc.double({ min: 0.01, max: 90, noNaN: true }),
        seedArb,
        (shape, scale, seed) => {
          const x = randomInput(shape, seed, scale).values;
          const { stock, native } = stockAndNative(() => values(() => tf.exp(tf.tensor(x, shape))));
          expect(native.shape).toEqual(stock.shape);
          expect(worstRatio(native.values, stock.values, 3e-45, 2e-7)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200, seed: 7 },
    );
  });

  it('Exp over a large tensor (threaded path) matches the stock kernel', () => {
    const x = randomValues(1 << 20, 11, 30);
    const { stock, native } = stockAndNative(() => values(() => tf.exp(tf.tensor1d(x))));
    expect(worstRatio(native.values, stock.values, 3e-45, 2e-7)).toBeLessThanOrEqual(1);
  });

  it('Softmax equals the stock kernel on generated shapes (rows of 1 to 300)', () => {
    fc.assert(
      fc.property(rowsArb, ({ shape, values: x }) => {
        const { stock, native } = stockAndNative(() =>
          values(() => tf.softmax(tf.tensor(x, shape))),
        );
        expect(native.shape).toEqual(shape);
        expect(worstRatio(native.values, stock.values, 1e-7, 2e-6)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200, seed: 8 },
    );
  });

  it('LogSoftmax kernel equals tf.logSoftmax on generated shapes', () => {
    fc.assert(
      fc.property(rowsArb, ({ shape, values: x }) => {
        const expected = withStock(() => values(() => tf.logSoftmax(tf.tensor(x, shape))));
        const native = withNative(() =>
          values(
            () =>
              tf
                .engine()
                .runKernel(
                  'LogSoftmax',
                  { logits: tf.tensor(x, shape) },
                  { axis: -1 },
                ) as tf.Tensor,
          ),
        );
        expect(native.shape).toEqual(shape);
        expect(worstRatio(native.values, expected.values, 2e-6, 2e-6)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200, seed: 9 },
    );
  });

  it('Softmax of a hand-computed row', () => {
    const out = withNative(() => values(() => tf.softmax(tf.tensor1d([0, Math.log(3)]))));
    expect(out.values[0]).toBeCloseTo(0.25, 6);
    expect(out.values[1]).toBeCloseTo(0.75, 6);
  });
});
