import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchMatMul, depthwiseBatchMatMul, setBatchMatMulRoute } from '../src/batch-matmul.js';
import { registerGradients } from '../src/gradients.js';
import { rmsNorm, swiGlu } from '../src/layers.js';
import { logProbStats } from '../src/log-prob-stats.js';
import { SeededRng } from '../src/rng.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
});

type Op = (xs: tf.Tensor[]) => tf.Tensor;

/**
 * Check tf.grads of sum(op(xs) · w) for a fixed random weighting w against central finite
 * differences in float32.
 */
interface CheckOpts {
  positive?: boolean;
  eps?: number;
  /** Kinks of the function: sampled values are kept at least 0.05 away from them. */
  awayFrom?: number[];
}

function checkOp(op: Op, shapes: number[][], seed: number, opts: CheckOpts = {}): void {
  const rng = new SeededRng(seed);
  const values = shapes.map((s) => {
    const n = s.reduce((a, b) => a * b, 1);
    const d = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let x = opts.positive ? 0.5 + rng.next() * 1.5 : rng.uniform(-1.5, 1.5);
      for (const k of opts.awayFrom ?? [])
        if (Math.abs(x - k) < 0.05) x = k + (x < k ? -0.05 : 0.05);
      d[i] = x;
    }
    return d;
  });
  const outShape = tf.tidy(() => op(values.map((v, i) => tf.tensor(v, shapes[i]))).shape);
  const wn = outShape.reduce((a, b) => a * b, 1);
  const w = Float32Array.from({ length: wn }, () => rng.uniform(-1, 1));
  const f = (...xs: tf.Tensor[]): tf.Tensor => tf.sum(tf.mul(op(xs), tf.tensor(w, outShape)));
  const analytic = tf.tidy(() =>
    tf
      .grads(f)(values.map((v, i) => tf.tensor(v, shapes[i])))
      .map((g) => g.dataSync().slice()),
  );
  const evalAt = (vals: Float32Array[]): number =>
    tf.tidy(() => f(...vals.map((v, i) => tf.tensor(v, shapes[i]))).dataSync()[0] as number);
  const eps = opts.eps ?? 1e-2;
  values.forEach((v, k) => {
    for (let i = 0; i < v.length; i++) {
      const plus = values.map((x) => x.slice());
      const minus = values.map((x) => x.slice());
      (plus[k] as Float32Array)[i] = (v[i] as number) + eps;
      (minus[k] as Float32Array)[i] = (v[i] as number) - eps;
      const fd = (evalAt(plus) - evalAt(minus)) / (2 * eps);
      const g = (analytic[k] as Float32Array)[i] as number;
      expect(Math.abs(fd - g), `input ${k} element ${i}`).toBeLessThan(5e-3 + 2e-2 * Math.abs(fd));
    }
  });
}

const KINK = { eps: 1e-3 };
const CASES: Array<[string, Op, number[][], CheckOpts?]> = [
  ['neg', ([x]) => tf.neg(x as tf.Tensor), [[2, 3]]],
  ['exp', ([x]) => tf.exp(x as tf.Tensor), [[2, 3]]],
  ['log', ([x]) => tf.log(x as tf.Tensor), [[5]], { positive: true }],
  ['sqrt', ([x]) => tf.sqrt(x as tf.Tensor), [[5]], { positive: true }],
  ['rsqrt', ([x]) => tf.rsqrt(x as tf.Tensor), [[5]], { positive: true }],
  ['square', ([x]) => tf.square(x as tf.Tensor), [[2, 2]]],
  ['reciprocal', ([x]) => tf.reciprocal(x as tf.Tensor), [[4]], { positive: true }],
  ['sigmoid', ([x]) => tf.sigmoid(x as tf.Tensor), [[2, 3]]],
  ['tanh', ([x]) => tf.tanh(x as tf.Tensor), [[2, 3]]],
  ['relu', ([x]) => tf.relu(x as tf.Tensor), [[6]], { ...KINK, awayFrom: [0] }],
  ['abs', ([x]) => tf.abs(x as tf.Tensor), [[6]], { ...KINK, awayFrom: [0] }],
  ['add (broadcast)', ([a, b]) => tf.add(a as tf.Tensor, b as tf.Tensor), [[2, 3], [3]]],
  [
    'sub (broadcast)',
    ([a, b]) => tf.sub(a as tf.Tensor, b as tf.Tensor),
    [
      [2, 1],
      [1, 3],
    ],
  ],
  [
    'mul (broadcast)',
    ([a, b]) => tf.mul(a as tf.Tensor, b as tf.Tensor),
    [
      [2, 3],
      [2, 1],
    ],
  ],
  ['div', ([a, b]) => tf.div(a as tf.Tensor, b as tf.Tensor), [[2, 3], [3]], { positive: true }],
  ['maximum', ([a, b]) => tf.maximum(a as tf.Tensor, b as tf.Tensor), [[4], [4]], KINK],
  ['minimum', ([a, b]) => tf.minimum(a as tf.Tensor, b as tf.Tensor), [[4], [4]], KINK],
  [
    'squaredDifference',
    ([a, b]) => tf.squaredDifference(a as tf.Tensor, b as tf.Tensor),
    [[3], [3]],
  ],
  ['pow', ([a, b]) => tf.pow(a as tf.Tensor, b as tf.Tensor), [[3], [3]], { positive: true }],
  ['sum axis', ([x]) => tf.sum(x as tf.Tensor, 1), [[2, 3, 2]]],
  ['sum keepDims', ([x]) => tf.sum(x as tf.Tensor, [0, 2], true), [[2, 3, 2]]],
  ['mean', ([x]) => tf.mean(x as tf.Tensor, -1, true), [[2, 4]]],
  ['mean all', ([x]) => tf.mean(x as tf.Tensor), [[2, 4]]],
  ['max', ([x]) => tf.max(x as tf.Tensor, 1), [[3, 4]], KINK],
  ['min', ([x]) => tf.min(x as tf.Tensor, 0), [[3, 4]], KINK],
  [
    'reshape+transpose',
    ([x]) => tf.transpose(tf.reshape(x as tf.Tensor, [2, 3, 2]), [2, 0, 1]),
    [[3, 4]],
  ],
  ['expandDims', ([x]) => tf.expandDims(x as tf.Tensor, 1), [[3, 2]]],
  ['slice', ([x]) => tf.slice(x as tf.Tensor, [1, 0], [2, -1]), [[4, 3]]],
  ['split', ([x]) => tf.split(x as tf.Tensor, [1, 2], 1)[1] as tf.Tensor, [[2, 3]]],
  [
    'concat',
    ([a, b]) => tf.concat([a as tf.Tensor, b as tf.Tensor], -1),
    [
      [2, 1],
      [2, 3],
    ],
  ],
  [
    'stack',
    ([a, b]) => tf.stack([a as tf.Tensor, b as tf.Tensor], 1),
    [
      [2, 3],
      [2, 3],
    ],
  ],
  ['unstack', ([x]) => tf.unstack(x as tf.Tensor, 1)[2] as tf.Tensor, [[2, 3]]],
  ['tile', ([x]) => tf.tile(x as tf.Tensor, [2, 3]), [[2, 2]]],
  [
    'clipByValue',
    ([x]) => tf.clipByValue(x as tf.Tensor, -0.5, 0.7),
    [[8]],
    { ...KINK, awayFrom: [-0.5, 0.7] },
  ],
  [
    'where',
    ([a, b]) => tf.where(tf.tensor1d([true, false, true], 'bool'), a as tf.Tensor, b as tf.Tensor),
    [[3], [3]],
  ],
  ['gather axis 0', ([x]) => tf.gather(x as tf.Tensor, tf.tensor1d([2, 0, 2], 'int32')), [[3, 2]]],
  [
    'gather axis 1, 2-D indices',
    ([x]) =>
      tf.gather(
        x as tf.Tensor,
        tf.tensor2d(
          [
            [1, 0],
            [1, 1],
          ],
          [2, 2],
          'int32',
        ),
        1,
      ),
    [[2, 3, 2]],
  ],
  ['softmax', ([x]) => tf.softmax(x as tf.Tensor), [[2, 4]]],
  ['logSoftmax', ([x]) => tf.logSoftmax(x as tf.Tensor), [[2, 4]]],
  [
    'matMul',
    ([a, b]) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D),
    [
      [2, 3],
      [3, 2],
    ],
  ],
  [
    'matMul tA',
    ([a, b]) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D, true, false),
    [
      [3, 2],
      [3, 4],
    ],
  ],
  [
    'matMul tB',
    ([a, b]) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D, false, true),
    [
      [2, 3],
      [4, 3],
    ],
  ],
  [
    'matMul tA tB',
    ([a, b]) => tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D, true, true),
    [
      [3, 2],
      [4, 3],
    ],
  ],
  [
    'batched matMul, broadcast batch',
    ([a, b]) => tf.matMul(a as tf.Tensor, b as tf.Tensor, false, true),
    [
      [2, 2, 3],
      [1, 4, 3],
    ],
  ],
  ['cast', ([x]) => tf.cast(x as tf.Tensor, 'float32'), [[3]]],
  [
    'rmsNorm (x and w)',
    ([x, w]) => rmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-5),
    [[3, 4], [4]],
  ],
  [
    'swiGlu',
    ([g, u]) => swiGlu(g as tf.Tensor2D, u as tf.Tensor2D),
    [
      [2, 3],
      [2, 3],
    ],
  ],
];

describe('registered gradients match finite differences', () => {
  for (const [name, op, shapes, opts] of CASES) {
    it(name, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) => checkOp(op, shapes, seed, opts)),
        { numRuns: 8, seed: 20261121 },
      );
    });
  }
});

describe('logProbStats (fused log-prob + entropy)', () => {
  it('values match logSoftmax, gradients match finite differences', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) => {
        const rng = new SeededRng(seed);
        const n = 3;
        const v = 5;
        const targets = Int32Array.from({ length: n }, () => Math.floor(rng.next() * v));
        const wl = Float32Array.from({ length: n }, () => rng.uniform(-1, 1));
        const wh = Float32Array.from({ length: n }, () => rng.uniform(-1, 1));
        const op = (xs: tf.Tensor[]): tf.Tensor => {
          const s = logProbStats(xs[0] as tf.Tensor2D, targets);
          return tf.add(tf.mul(s.logProbs, tf.tensor1d(wl)), tf.mul(s.entropies, tf.tensor1d(wh)));
        };
        checkOp(op, [[n, v]], seed, { eps: 1e-2 });
        tf.tidy(() => {
          const z = tf.randomNormal([n, v], 0, 2, 'float32', seed) as tf.Tensor2D;
          const s = logProbStats(z, targets);
          const ref = tf.logSoftmax(z).arraySync() as number[][];
          const lp = s.logProbs.arraySync();
          const h = s.entropies.arraySync();
          ref.forEach((row, i) => {
            expect(
              Math.abs((lp[i] as number) - (row[targets[i] as number] as number)),
            ).toBeLessThan(1e-5);
            const hr = -row.reduce((a, x) => a + Math.exp(x) * x, 0);
            expect(Math.abs((h[i] as number) - hr)).toBeLessThan(1e-5);
          });
        });
      }),
      { numRuns: 20, seed: 7 },
    );
  });
});

describe('batchMatMul through depthwise convolution (wasm)', () => {
  it('matches tf.matMul in value and gradient for every transpose combination', async () => {
    await import('@tensorflow/tfjs-backend-wasm');
    await tf.setBackend('wasm');
    try {
      for (const [ta, tb] of [
        [false, false],
        [false, true],
        [true, false],
        [true, true],
      ] as const) {
        const a = tf.randomNormal(ta ? [3, 4, 5] : [3, 5, 4], 0, 1, 'float32', 1) as tf.Tensor3D;
        const b = tf.randomNormal(tb ? [3, 6, 4] : [3, 4, 6], 0, 1, 'float32', 2) as tf.Tensor3D;
        const w = tf.randomNormal([3, 5, 6], 0, 1, 'float32', 3);
        const loss =
          (f: (x: tf.Tensor3D, y: tf.Tensor3D) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) =>
            tf.sum(tf.mul(f(x as tf.Tensor3D, y as tf.Tensor3D), w));
        const fast = tf.grads(loss((x, y) => depthwiseBatchMatMul(x, y, ta, tb)))([a, b]);
        const ref = tf.grads(loss((x, y) => tf.matMul(x, y, ta, tb)))([a, b]);
        const vFast = depthwiseBatchMatMul(a, b, ta, tb);
        const vRef = tf.matMul(a, b, ta, tb);
        for (const [x, y] of [
          [vFast, vRef],
          ...fast.map((g, i) => [g, ref[i] as tf.Tensor]),
        ] as Array<[tf.Tensor, tf.Tensor]>) {
          expect(x.shape).toEqual(y.shape);
          expect(tf.max(tf.abs(tf.sub(x, y))).dataSync()[0]).toBeLessThan(1e-4);
        }
        // Large products take the depthwise route through the public entry point.
        const big = batchMatMul(tf.ones([8, 64, 64]), tf.ones([8, 64, 64]), ta, tb, 'wasm');
        expect(big.shape).toEqual([8, 64, 64]);
        expect(big.dataSync()[0]).toBe(64);
        big.dispose();
        for (const r of ['matmul', 'depthwise', 'auto'] as const) {
          setBatchMatMulRoute(r);
          const v = batchMatMul(a, b, ta, tb, 'wasm');
          expect(tf.max(tf.abs(tf.sub(v, vRef))).dataSync()[0]).toBeLessThan(1e-4);
          v.dispose();
        }
        expect(() => setBatchMatMulRoute('x' as 'auto')).toThrow(TypeError);
        tf.dispose([a, b, w, vFast, vRef, ...fast, ...ref]);
      }
    } finally {
      await tf.setBackend('cpu');
    }
  });
});
