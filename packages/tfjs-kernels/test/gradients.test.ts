import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { registerGradients } from '../src/gradients.js';
import { type CheckOpts, checkOp, type Op } from './helpers.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
});

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
