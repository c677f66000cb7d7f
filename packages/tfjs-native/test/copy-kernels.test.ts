import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeNative, stockAndNative } from './helpers.js';
import { dimArb, randomInput, randomValues, seedArb } from './values.js';

type Out = { shape: number[]; dtype: string; values: number[] }[];

function read(ts: tf.Tensor | tf.Tensor[]): Out {
  return (Array.isArray(ts) ? ts : [ts]).map((t) => ({
    shape: t.shape,
    dtype: t.dtype,
    values: Array.from(t.dataSync()),
  }));
}

function make(shape: number[], seed: number, int: boolean): tf.Tensor {
  const v = randomInput(shape, seed, 50).values;
  return int ? tf.tensor(Int32Array.from(v, Math.round), shape, 'int32') : tf.tensor(v, shape);
}

const shapeArb = fc.array(dimArb(6), { minLength: 1, maxLength: 4 });

function same(fn: () => tf.Tensor | tf.Tensor[]): void {
  const { stock, native } = stockAndNative(() => tf.tidy(() => read(fn())));
  expect(native).toEqual(stock);
}

describeNative('SplitV, Concat and Slice by block copies', () => {
  it('split equals the stock kernel (counts and sizes, every axis, both dtypes)', () => {
    fc.assert(
      fc.property(shapeArb, fc.nat(3), fc.boolean(), seedArb, (shape, ax, int, seed) => {
        const axis = ax % shape.length;
        const dim = shape[axis]!;
        const rand = mulberry32(seed);
        // sizes: a random composition of dim, one entry possibly -1
        const sizes: number[] = [];
        let left = dim;
        while (left > 0) {
          const s = 1 + Math.floor(rand() * left);
          sizes.push(s);
          left -= s;
        }
        // -1 (the rest) anywhere but first: the stock kernel miscounts a leading -1.
        if (sizes.length > 1 && rand() < 0.5)
          sizes[1 + Math.floor(rand() * (sizes.length - 1))] = -1;
        const x = make(shape, seed, int);
        same(() => tf.split(x, sizes, axis));
        same(() => tf.split(x, 1, axis));
        x.dispose();
      }),
      { numRuns: 200, seed: 71 },
    );
  });

  it('concat equals the stock kernel', () => {
    fc.assert(
      fc.property(
        shapeArb,
        fc.nat(3),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 2, maxLength: 4 }),
        fc.boolean(),
        seedArb,
        (shape, ax, dims, int, seed) => {
          const axis = ax % shape.length;
          const parts = dims.map((d, i) => {
            const s = shape.slice();
            s[axis] = d;
            return make(s, seed + i, int);
          });
          same(() => tf.concat(parts, axis));
          tf.dispose(parts);
        },
      ),
      { numRuns: 200, seed: 72 },
    );
  });

  it('slice equals the stock kernel (begin, size with -1)', () => {
    fc.assert(
      fc.property(shapeArb, fc.boolean(), seedArb, (shape, int, seed) => {
        const rand = mulberry32(seed);
        const begin = shape.map((d) => Math.floor(rand() * d));
        const size = shape.map((d, i) =>
          rand() < 0.3 ? -1 : Math.floor(rand() * (d - begin[i]! + 1)),
        );
        const x = make(shape, seed, int);
        same(() => tf.slice(x, begin, size));
        x.dispose();
      }),
      { numRuns: 200, seed: 73 },
    );
  });

  it('split + concat gradients flow as with the stock kernels', () => {
    const x = tf.tensor2d(randomValues(6 * 10, 3), [6, 10]);
    const f = (t: tf.Tensor) => {
      const [a, b] = tf.split(t, [4, 6], 1);
      return tf.sum(tf.mul(tf.concat([b!, a!], 1), tf.reshape(tf.range(0, 60), [6, 10])));
    };
    same(() => tf.grad(f)(x));
    x.dispose();
  });
});
