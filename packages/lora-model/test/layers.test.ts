import { registerGradients } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { checkOp } from '../../tfjs-kernels/test/helpers.js';
import { rmsNorm, swiGlu } from '../src/layers.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
});

describe('layers with written-out gradients match finite differences', () => {
  it('rmsNorm (x and w)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) =>
        checkOp(([x, w]) => rmsNorm(x as tf.Tensor2D, w as tf.Tensor1D, 1e-5), [[3, 4], [4]], seed),
      ),
      { numRuns: 8, seed: 20261121 },
    );
  });

  it('swiGlu', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) =>
        checkOp(
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
