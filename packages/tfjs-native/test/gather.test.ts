import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeNative, runNative, stockAndNative, useWasm, withNative } from './helpers.js';
import { dimArb, randomValues, seedArb } from './values.js';

function gathered(
  xShape: number[],
  x: Float32Array | Int32Array,
  dtype: 'float32' | 'int32',
  idShape: number[],
  ids: Int32Array,
  axis: number,
) {
  return tf.tidy(() => {
    const out = tf.gather(tf.tensor(x, xShape, dtype), tf.tensor(ids, idShape, 'int32'), axis);
    return { shape: out.shape, dtype: out.dtype, values: Array.from(out.dataSync()) };
  });
}

describeNative('GatherV2 by heap copies', () => {
  it('equals the stock kernel for every axis, index shape and 4-byte dtype', () => {
    fc.assert(
      fc.property(
        fc.array(dimArb(5), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 2 }),
        fc.integer({ min: -3, max: 2 }),
        fc.boolean(),
        seedArb,
        fc.integer({ min: 0, max: 40 }),
        (xShape, idShape, rawAxis, isInt, seed, wide) => {
          const shape = [...xShape, wide === 0 ? 1 : wide]; // last axis up to 40: both copy paths
          const axis = ((rawAxis % shape.length) + shape.length) % shape.length;
          const size = shape.reduce((p, d) => p * d, 1);
          const vals = randomValues(size, seed, 100);
          const x = isInt ? Int32Array.from(vals, Math.round) : vals;
          const rand = mulberry32(seed + 1);
          const count = idShape.reduce((p, d) => p * d, 1);
          const ids = Int32Array.from({ length: count }, () => Math.floor(rand() * shape[axis]!));
          const dtype = isInt ? 'int32' : 'float32';
          const { stock, native } = stockAndNative(() =>
            gathered(shape, x, dtype, idShape, ids, axis),
          );
          expect(native).toEqual(stock);
        },
      ),
      { numRuns: 200, seed: 61 },
    );
  });

  it('reports out-of-range indices like the stock kernel', () => {
    const x = tf.ones([3, 2]);
    const bad = tf.tensor1d([0, 3], 'int32');
    withNative(() => expect(() => tf.gather(x, bad)).toThrow(/not in \[0, 2\]/));
    tf.dispose([x, bad]);
  });

  it('copies embedding rows exactly', () => {
    const table = tf.tensor2d(randomValues(50 * 64, 9), [50, 64]);
    const ids = tf.tensor2d(
      [
        [49, 0, 7],
        [7, 7, 1],
      ],
      [2, 3],
      'int32',
    );
    const out = withNative(() => tf.gather(table, ids));
    expect(out.shape).toEqual([2, 3, 64]);
    const t = table.arraySync() as number[][];
    const o = out.arraySync() as unknown as number[][][];
    expect(o[0]![0]).toEqual(t[49]);
    expect(o[1]![2]).toEqual(t[1]);
    tf.dispose([table, ids, out]);
  });
});

describe.runIf(runNative)('UnsortedSegmentSum', () => {
  beforeAll(async () => {
    await useWasm();
  });

  it('scatter-adds rows like a direct loop, dropping out-of-range ids', () => {
    fc.assert(
      fc.property(dimArb(12), dimArb(40), dimArb(6), seedArb, (rows, width, segments, seed) => {
        const x = randomValues(rows * width, seed);
        const rand = mulberry32(seed + 1);
        const ids = Int32Array.from(
          { length: rows },
          () => Math.floor(rand() * (segments + 2)) - 1,
        );
        const expected = new Float64Array(segments * width);
        ids.forEach((s, i) => {
          if (s < 0 || s >= segments) return;
          for (let j = 0; j < width; j++) expected[s * width + j]! += x[i * width + j]!;
        });
        const got = withNative(() =>
          tf.tidy(() =>
            tf
              .unsortedSegmentSum(
                tf.tensor2d(x, [rows, width]),
                tf.tensor1d(ids, 'int32'),
                segments,
              )
              .dataSync(),
          ),
        );
        expect(got.length).toBe(expected.length);
        for (let i = 0; i < got.length; i++) {
          expect(Math.abs(got[i]! - expected[i]!)).toBeLessThan(1e-5);
        }
      }),
      { numRuns: 150, seed: 62 },
    );
  });

  it('makes the gradient of gather (an embedding) available on wasm', () => {
    const table = tf.tensor2d(randomValues(5 * 3, 4), [5, 3]);
    const ids = tf.tensor1d([4, 0, 4], 'int32');
    const g = withNative(() => tf.grad((t: tf.Tensor) => tf.sum(tf.gather(t, ids)))(table));
    expect(Array.from(g.dataSync())).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2]);
    tf.dispose([table, ids, g]);
  });
});
