import { registerGradients } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { rmsNorm, swiGlu } from '../src/layers.js';
import { SeededRng } from '../src/rng.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
});

/**
 * The written-out gradients of `op` (tf.grads of sum(op(xs) · w) for a seeded weighting w)
 * against central finite differences in float32.
 */
function checkGradients(
  op: (xs: tf.Tensor[]) => tf.Tensor,
  shapes: number[][],
  seed: number,
): void {
  const rng = new SeededRng(seed);
  const values = shapes.map((s) =>
    Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => rng.uniform(-1.5, 1.5)),
  );
  const outShape = tf.tidy(() => op(values.map((v, i) => tf.tensor(v, shapes[i]))).shape);
  const w = Float32Array.from({ length: outShape.reduce((a, b) => a * b, 1) }, () =>
    rng.uniform(-1, 1),
  );
  const f = (...xs: tf.Tensor[]): tf.Tensor => tf.sum(tf.mul(op(xs), tf.tensor(w, outShape)));
  const at = (vals: Float32Array[]): number =>
    tf.tidy(() => f(...vals.map((v, i) => tf.tensor(v, shapes[i]))).dataSync()[0] as number);
  const analytic = tf.tidy(() =>
    tf
      .grads(f)(values.map((v, i) => tf.tensor(v, shapes[i])))
      .map((g) => g.dataSync().slice()),
  );
  const eps = 1e-2;
  values.forEach((v, k) => {
    for (let i = 0; i < v.length; i++) {
      const plus = values.map((x) => x.slice());
      const minus = values.map((x) => x.slice());
      (plus[k] as Float32Array)[i] = (v[i] as number) + eps;
      (minus[k] as Float32Array)[i] = (v[i] as number) - eps;
      const fd = (at(plus) - at(minus)) / (2 * eps);
      const g = (analytic[k] as Float32Array)[i] as number;
      expect(Math.abs(fd - g), `input ${k} element ${i}`).toBeLessThan(5e-3 + 2e-2 * Math.abs(fd));
    }
  });
}

describe('layers with written-out gradients match finite differences', () => {
  it('rmsNorm (x and w)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) =>
        checkGradients(
          ([x, w]) => rmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-5),
          [[3, 4], [4]],
          seed,
        ),
      ),
      { numRuns: 8, seed: 20261121 },
    );
  });

  it('swiGlu', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) =>
        checkGradients(
          ([g, u]) => swiGlu(g as tf.Tensor2D, u as tf.Tensor2D),
          [
            [2, 3],
            [2, 3],
          ],
          seed,
        ),
      ),
      { numRuns: 8, seed: 20261121 },
    );
  });
});
