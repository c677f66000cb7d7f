import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { expect } from 'vitest';
import { clipCoefficient } from '../src/grad-clip.js';

/** The coefficient as the host computed it before it moved to the device. */
const hostCoefficient = (norm: number, maxNorm: number) =>
  Math.fround(Math.min(1, maxNorm / (norm + 1e-6)));

/**
 * Checks on the current backend that `clipCoefficient` gives exactly the float64 formula rounded
 * to float32, for norms from 1e-12 to 1e15 (clipping active or not) and the edge cases.
 */
export function expectClipCoefficientsExact(): void {
  const check = (norm: number, maxNorm: number) => {
    const n = Math.fround(norm);
    const got = tf.tidy(() => clipCoefficient(tf.scalar(n), maxNorm).dataSync()[0]!);
    expect(Object.is(got, hostCoefficient(n, maxNorm)), `norm ${n}, maxNorm ${maxNorm}`).toBe(true);
  };
  for (const maxNorm of [0.5, 1, 0.3, 1e-3, 40]) {
    for (const norm of [0, 1e-45, 1e-6, maxNorm, 0.5, 1, 3.7, 1e20, Infinity, Number.NaN])
      check(norm, maxNorm);
  }
  fc.assert(
    fc.property(
      fc.double({ min: -12, max: 15, noNaN: true }),
      fc.constantFrom(0.5, 1, 0.3, 0.1, 2.5, 1e-2),
      (exponent, maxNorm) => {
        check(10 ** exponent, maxNorm);
      },
    ),
    { numRuns: 2000 },
  );
}
