import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeNative, withNative, withStock } from './helpers.js';
import { dimArb, randomInput, referenceMatMul, seedArb, worstRatio } from './values.js';

type BatchMode = 'none' | 'equal' | 'equal2' | 'aOnly' | 'bOnly' | 'aOne' | 'general';

interface Case {
  m: number;
  n: number;
  k: number;
  transposeA: boolean;
  transposeB: boolean;
  mode: BatchMode;
  batch: number;
  seed: number;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  m: dimArb(9),
  n: dimArb(9),
  k: dimArb(17),
  transposeA: fc.boolean(),
  transposeB: fc.boolean(),
  mode: fc.constantFrom<BatchMode>('none', 'equal', 'equal2', 'aOnly', 'bOnly', 'aOne', 'general'),
  batch: dimArb(4),
  seed: seedArb,
});

function shapes(c: Case): { aShape: number[]; bShape: number[] } {
  const aMat = c.transposeA ? [c.k, c.m] : [c.m, c.k];
  const bMat = c.transposeB ? [c.n, c.k] : [c.k, c.n];
  const bt = c.batch;
  switch (c.mode) {
    case 'none':
      return { aShape: aMat, bShape: bMat };
    case 'equal':
      return { aShape: [bt, ...aMat], bShape: [bt, ...bMat] };
    case 'equal2':
      return { aShape: [2, bt, ...aMat], bShape: [2, bt, ...bMat] };
    case 'aOnly':
      return { aShape: [bt, ...aMat], bShape: bMat };
    case 'bOnly':
      return { aShape: aMat, bShape: [bt, ...bMat] };
    case 'aOne':
      return { aShape: [1, ...aMat], bShape: [bt, ...bMat] };
    default:
      return { aShape: [2, 1, ...aMat], bShape: [1, bt, ...bMat] };
  }
}

function matMulValues(
  aShape: number[],
  a: Float32Array,
  bShape: number[],
  b: Float32Array,
  c: Case,
) {
  return tf.tidy(() => {
    const out = tf.matMul(tf.tensor(a, aShape), tf.tensor(b, bShape), c.transposeA, c.transposeB);
    return { shape: out.shape, values: out.dataSync().slice() };
  });
}

describeNative('native BatchMatMul', () => {
  it('matches a float64 reference and the stock kernel for every transpose and broadcast', () => {
    const before = tf.memory().numTensors;
    let stockCompared = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const { aShape, bShape } = shapes(c);
        const a = randomInput(aShape, c.seed).values;
        const b = randomInput(bShape, c.seed + 1).values;
        const ref = referenceMatMul(aShape, a, bShape, b, c.transposeA, c.transposeB);
        const native = withNative(() => matMulValues(aShape, a, bShape, b, c));
        expect(native.shape).toEqual(ref.shape);
        // |c| <= k for inputs in [-1, 1]; float32 accumulation error stays far below 1e-6·k.
        expect(worstRatio(native.values, ref.values, 1e-6 * c.k, 0)).toBeLessThanOrEqual(1);
        // Stock wasm kernels return a wrong-length result for general broadcasts: compare the rest.
        if (c.mode !== 'general') {
          const stock = withStock(() => matMulValues(aShape, a, bShape, b, c));
          expect(stock.shape).toEqual(native.shape);
          expect(worstRatio(native.values, stock.values, 2e-6 * c.k, 0)).toBeLessThanOrEqual(1);
          stockCompared++;
        }
      }),
      { numRuns: 200, seed: 20261121 },
    );
    expect(stockCompared).toBeGreaterThan(100);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('handles empty outputs and k = 0 (zeros)', () => {
    withNative(() => {
      const zeroK = tf.matMul(tf.zeros([3, 0]), tf.zeros([0, 2]));
      expect(zeroK.shape).toEqual([3, 2]);
      expect(Array.from(zeroK.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
      const empty = tf.matMul(tf.zeros([0, 4]), tf.ones([4, 5]));
      expect(empty.shape).toEqual([0, 5]);
      tf.dispose([zeroK, empty]);
    });
  });

  it('writes into the new heap when allocating the output grows wasm memory', () => {
    const backend = tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } };
    withNative(() => {
      const before = backend.wasm.HEAPU8.byteLength;
      const n = Math.ceil(Math.sqrt(before / 4)) + 256; // output larger than the whole heap
      const a = tf.tidy(() => tf.reshape(tf.range(0, n), [n, 1]));
      const b = tf.ones([1, n]);
      const out = tf.matMul(a, b);
      expect(backend.wasm.HEAPU8.byteLength).toBeGreaterThan(before);
      const data = out.dataSync();
      for (const i of [0, 1, n - 1]) {
        expect(data[i * n]).toBe(i);
        expect(data[i * n + n - 1]).toBe(i);
      }
      tf.dispose([a, b, out]);
    });
  });

  it('reports mismatched inner sizes with both shapes', () => {
    withNative(() => {
      const a = tf.ones([2, 3]);
      const b = tf.ones([4, 2]);
      expect(() => tf.matMul(a, b)).toThrow(/\[2,3\].*\[4,2\]/);
      tf.dispose([a, b]);
    });
  });

  it('is exact on a hand-computed product with transposes', () => {
    withNative(() => {
      const a = tf.tensor2d([1, 2, 3, 4, 5, 6], [3, 2]); // aᵀ is [[1,3,5],[2,4,6]]
      const b = tf.tensor2d([1, 0, 2, 1, 1, 0], [2, 3]); // bᵀ is [[1,1],[0,1],[2,0]]
      const out = tf.matMul(a, b, true, true); // [2,3]·[3,2]
      expect(Array.from(out.dataSync())).toEqual([11, 4, 14, 6]);
      tf.dispose([a, b, out]);
    });
  });

  it('leaves int32 products to the stock kernel (which rejects them the same way)', () => {
    const a = tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32');
    const stockError = withStock(() => {
      try {
        tf.matMul(a, a).dispose();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    });
    expect(stockError).toMatch(/float32/);
    withNative(() => expect(() => tf.matMul(a, a)).toThrow(stockError));
    a.dispose();
  });
});
