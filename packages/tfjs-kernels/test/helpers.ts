import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { expect } from 'vitest';

/** A seeded stream of floats in [0, 1) (mulberry32), for test inputs. */
export class TestRng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(Math.floor(seed));
  }

  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }
}

/** `n` seeded values uniform in [-scale, scale). */
export function randomValues(n: number, seed: number, scale = 1): Float32Array {
  const rng = new TestRng(seed);
  return Float32Array.from({ length: n }, () => rng.uniform(-scale, scale));
}

/** Largest absolute difference of two equal-length arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

export type Op = (xs: tf.Tensor[]) => tf.Tensor;

export interface CheckOpts {
  positive?: boolean;
  eps?: number;
  /** Kinks of the function: sampled values are kept at least 0.05 away from them. */
  awayFrom?: number[];
}

/**
 * Check tf.grads of sum(op(xs) · w) for a fixed random weighting w against central finite
 * differences in float32.
 */
export function checkOp(op: Op, shapes: number[][], seed: number, opts: CheckOpts = {}): void {
  const rng = new TestRng(seed);
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
