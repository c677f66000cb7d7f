import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect } from 'vitest';
import { sizeOf } from '../src/wasm-heap.js';

// Seeded inputs of the tests and the comparisons of their results.

/** Seeds of the generated inputs: any non-negative 32-bit integer. */
export const seedArb = fc.integer({ min: 0, max: 2 ** 31 - 1 });

/** A dimension of 1 to `max`. */
export const dimArb = (max: number) => fc.integer({ min: 1, max });

/** `size` seeded uniform values in [-scale, scale). */
export function randomValues(size: number, seed: number, scale = 1): Float32Array {
  const rand = mulberry32(seed);
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = (rand() * 2 - 1) * scale;
  return out;
}

/** Seeded uniform values in [-scale, scale) for a tensor of `shape`, with the shape. */
export function randomInput(
  shape: number[],
  seed: number,
  scale = 1,
): { shape: number[]; values: Float32Array } {
  return { shape, values: randomValues(sizeOf(shape), seed, scale) };
}

/** Values of a function of tensors and the gradients of a weighted sum of them. */
export interface Result {
  values: Float32Array[];
  grads: Float32Array[];
}

/** Values of `f(xs)` and gradients of Σ_i sum(f_i · w_i) for seeded weights w_i. */
export function evaluate(
  f: (xs: tf.Tensor[]) => tf.Tensor[],
  inputs: { shape: number[]; values: Float32Array }[],
  seed: number,
): Result {
  return tf.tidy(() => {
    const xs = inputs.map((x) => tf.tensor(x.values, x.shape));
    const values = f(xs).map((t) => t.dataSync().slice() as Float32Array);
    const g = tf.grads((...args: tf.Tensor[]) => {
      const outs = f(args);
      return tf.addN(
        outs.map((y, i) => tf.sum(tf.mul(y, tf.tensor(randomValues(y.size, seed + i), y.shape)))),
      ) as tf.Scalar;
    });
    const grads = g(xs).map((t) => t.dataSync().slice() as Float32Array);
    return { values, grads };
  });
}

/** Values and gradients within `atol + rtol·|reference|`, element by element. */
export function expectClose(native: Result, reference: Result, atol: number, rtol: number): void {
  expect(native.values.length).toBe(reference.values.length);
  native.values.forEach((v, i) => {
    expect(worstRatio(v, reference.values[i]!, atol, rtol)).toBeLessThanOrEqual(1);
  });
  native.grads.forEach((g, i) => {
    expect(worstRatio(g, reference.grads[i]!, atol, rtol)).toBeLessThanOrEqual(1);
  });
}

/** Largest |a - b| / (atol + rtol·|b|); ≤ 1 means within tolerance. NaN and ±Inf must match. */
export function worstRatio(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  atol: number,
  rtol: number,
): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (Number.isNaN(y) || Number.isNaN(x)) {
      if (!(Number.isNaN(x) && Number.isNaN(y))) return Number.POSITIVE_INFINITY;
      continue;
    }
    if (!Number.isFinite(y) || !Number.isFinite(x)) {
      if (x !== y) return Number.POSITIVE_INFINITY;
      continue;
    }
    worst = Math.max(worst, Math.abs(x - y) / (atol + rtol * Math.abs(y)));
  }
  return worst;
}

/** Float64 reference of matMul with broadcast batches: returns [shape, values]. */
export function referenceMatMul(
  aShape: number[],
  a: Float32Array,
  bShape: number[],
  b: Float32Array,
  transposeA: boolean,
  transposeB: boolean,
): { shape: number[]; values: Float64Array } {
  const ar = aShape.length;
  const br = bShape.length;
  const m = transposeA ? aShape[ar - 1]! : aShape[ar - 2]!;
  const k = transposeA ? aShape[ar - 2]! : aShape[ar - 1]!;
  const n = transposeB ? bShape[br - 2]! : bShape[br - 1]!;
  const aB = aShape.slice(0, -2);
  const bB = bShape.slice(0, -2);
  const rank = Math.max(aB.length, bB.length);
  const pad = (d: number[]) => [...new Array<number>(rank - d.length).fill(1), ...d];
  const pa = pad(aB);
  const pb = pad(bB);
  const out = pa.map((d, i) => Math.max(d, pb[i]!));
  const total = out.reduce((p, d) => p * d, 1);
  const values = new Float64Array(total * m * n);
  for (let t = 0; t < total; t++) {
    let rem = t;
    let ai = 0;
    let bi = 0;
    let sa = 1;
    let sb = 1;
    for (let ax = rank - 1; ax >= 0; ax--) {
      const idx = rem % out[ax]!;
      rem = Math.floor(rem / out[ax]!);
      ai += (pa[ax] === 1 ? 0 : idx) * sa;
      bi += (pb[ax] === 1 ? 0 : idx) * sb;
      sa *= pa[ax]!;
      sb *= pb[ax]!;
    }
    const aBase = ai * m * k;
    const bBase = bi * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < k; p++) {
          const av = transposeA ? a[aBase + p * m + i]! : a[aBase + i * k + p]!;
          const bv = transposeB ? b[bBase + j * k + p]! : b[bBase + p * n + j]!;
          s += av * bv;
        }
        values[t * m * n + i * n + j] = s;
      }
    }
  }
  return { shape: [...out, m, n], values };
}
