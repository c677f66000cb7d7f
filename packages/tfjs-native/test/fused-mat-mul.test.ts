import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { biasLayout } from '../src/kernels/fused-mat-mul.js';
import { describeNative, stockAndNative, withNative, withStock } from './helpers.js';
import { dimArb, randomInput, randomValues, seedArb, worstRatio } from './values.js';

type Act = 'linear' | 'relu' | 'relu6' | 'leakyrelu' | 'elu' | 'sigmoid' | 'prelu';
type BiasKind = 'none' | 'row' | 'scalar' | 'full';

/** A product with bias and activation: operands, transposes, the bias (or none), PReLU slopes. */
interface Product {
  aShape: number[];
  a: Float32Array;
  bShape: number[];
  b: Float32Array;
  tA: boolean;
  tB: boolean;
  bias: { shape: number[]; values: Float32Array } | null;
  activation: Act;
  slopes?: Float32Array;
}

/** The same product with separate stock ops (matMul, add, activation): the oracle. */
function composite(p: Product): Float32Array {
  const { aShape, a, bShape, b, tA, tB, bias, activation } = p;
  const slopes = p.slopes ?? Float32Array.of(0.3);
  return tf.tidy(() => {
    let y = tf.matMul(tf.tensor(a, aShape), tf.tensor(b, bShape), tA, tB);
    if (bias) y = tf.add(y, tf.tensor(bias.values, bias.shape));
    const activated =
      activation === 'relu'
        ? tf.relu(y)
        : activation === 'relu6'
          ? tf.relu6(y)
          : activation === 'leakyrelu'
            ? tf.leakyRelu(y, 0.1)
            : activation === 'elu'
              ? tf.elu(y)
              : activation === 'sigmoid'
                ? tf.sigmoid(y)
                : activation === 'prelu'
                  ? tf.prelu(y, tf.tensor1d(slopes))
                  : y;
    return activated.dataSync().slice() as Float32Array;
  });
}

function fused(p: Product): Float32Array {
  const { aShape, a, bShape, b, tA, tB, bias, activation } = p;
  const slopes = p.slopes ?? Float32Array.of(0.3);
  return tf.tidy(() => {
    const out = tf.fused.matMul({
      a: tf.tensor(a, aShape),
      b: tf.tensor(b, bShape),
      transposeA: tA,
      transposeB: tB,
      bias: bias ? tf.tensor(bias.values, bias.shape) : undefined,
      activation,
      preluActivationWeights: activation === 'prelu' ? tf.tensor1d(slopes) : undefined,
      leakyreluAlpha: 0.1,
    });
    return out.dataSync().slice() as Float32Array;
  });
}

describe('bias layouts', () => {
  it('classifies scalar, per-column, full and other biases', () => {
    expect(biasLayout(undefined, [2, 3])).toBe(0);
    expect(biasLayout([1], [2, 3])).toBe(1);
    expect(biasLayout([3], [2, 3])).toBe(3);
    expect(biasLayout([1, 3], [4, 2, 3])).toBe(3);
    expect(biasLayout([2, 3], [2, 3])).toBe(6);
    expect(biasLayout([2, 1], [2, 3])).toBe(-1);
    expect(biasLayout([3, 1, 1, 3], [2, 3])).toBe(-1);
  });
});

describeNative('native _FusedMatMul', () => {
  it('stock wasm _FusedMatMul gets a transposeB + bias case wrong (why the oracle is composite)', () => {
    const a = Float32Array.from([1, 2]);
    const b = Float32Array.from([3, 4]);
    const bias = { shape: [2], values: Float32Array.from([10, 20]) };
    const expected = [13, 24, 16, 28];
    const p: Product = {
      aShape: [2, 1],
      a,
      bShape: [2, 1],
      b,
      tA: false,
      tB: true,
      bias,
      activation: 'linear',
    };
    const { stock, native } = stockAndNative(() => fused(p));
    expect(Array.from(native)).toEqual(expected);
    expect(Array.from(stock)).not.toEqual(expected);
  });

  it('equals stock matMul + bias + activation for every activation, bias layout and transpose', () => {
    fc.assert(
      fc.property(
        dimArb(8),
        dimArb(8),
        dimArb(12),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<BiasKind>('none', 'row', 'scalar', 'full'),
        fc.constantFrom<Act>('linear', 'relu', 'relu6', 'leakyrelu', 'elu', 'sigmoid', 'prelu'),
        seedArb,
        (m, n, k, batch, tA, tB, biasKind, act, seed) => {
          const lead = batch === 0 ? [] : [batch];
          const aShape = [...lead, ...(tA ? [k, m] : [m, k])];
          const bShape = [...lead, ...(tB ? [n, k] : [k, n])];
          const outShape = [...lead, m, n];
          const a = randomInput(aShape, seed, 3).values;
          const b = randomInput(bShape, seed + 1, 3).values;
          const biasShape =
            biasKind === 'row'
              ? [n]
              : biasKind === 'scalar'
                ? [1]
                : biasKind === 'full'
                  ? outShape
                  : [];
          const bias =
            biasKind === 'none'
              ? null
              : {
                  shape: biasShape,
                  values: randomInput(biasShape, seed + 2, 3).values,
                };
          // PReLU slopes: one shared value or one per column.
          const slopes = randomValues(seed % 2 === 0 ? 1 : n, seed + 3, 0.5);
          const p: Product = { aShape, a, bShape, b, tA, tB, bias, activation: act, slopes };
          const stock = withStock(() => composite(p));
          const native = withNative(() => fused(p));
          expect(worstRatio(native, stock, 1e-5 * k, 1e-6)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200, seed: 31 },
    );
  });
});
