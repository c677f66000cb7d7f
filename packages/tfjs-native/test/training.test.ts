import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { expect, it } from 'vitest';
import { describeNative, withNative, withStock } from './helpers.js';
import { randomValues } from './values.js';

const B = 2;
const T = 8;
const D = 16;
const H = 2;
const F = 32;
const V = 24;

/** A one-block attention + MLP language model with a frozen input and trainable weights. */
function train(steps: number, seed: number): number[] {
  const rand = mulberry32(seed);
  const init = (shape: number[], scale: number) => {
    const size = shape.reduce((p, d) => p * d, 1);
    const value = tf.tensor(randomValues(size, Math.floor(rand() * 2 ** 31), scale), shape);
    const variable = tf.variable(value);
    value.dispose();
    return variable;
  };
  const x = tf.tensor(randomValues(B * T * D, seed + 1), [B, T, D]);
  const targets = tf.tidy(() =>
    tf.oneHot(
      tf.tensor1d(
        Array.from({ length: B * T }, () => Math.floor(rand() * V)),
        'int32',
      ),
      V,
    ),
  );
  const mask = tf.tensor(
    Array.from({ length: T * T }, (_, i) => (i % T <= Math.floor(i / T) ? 0 : -1e9)),
    [T, T],
  );
  const w = {
    q: init([D, D], 0.3),
    k: init([D, D], 0.3),
    v: init([D, D], 0.3),
    o: init([D, D], 0.3),
    up: init([D, F], 0.3),
    upBias: init([F], 0.1),
    down: init([F, D], 0.3),
    head: init([D, V], 0.3),
  };
  const optimizer = tf.train.adam(0.01);
  const heads = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [B, T, H, D / H]), [0, 2, 1, 3]);
  const loss = () =>
    tf.tidy(() => {
      const flat = tf.reshape(x, [B * T, D]);
      const q = heads(tf.matMul(flat, w.q));
      const k = heads(tf.matMul(flat, w.k));
      const v = heads(tf.matMul(flat, w.v));
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(D / H)), mask);
      const attn = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), v), [0, 2, 1, 3]), [
        B * T,
        D,
      ]);
      const h = tf.add(flat, tf.matMul(attn, w.o));
      const mlp = tf.fused.matMul({ a: h, b: w.up, bias: w.upBias, activation: 'relu' });
      const h2 = tf.add(h, tf.matMul(mlp, w.down));
      const logits = tf.matMul(h2, w.head);
      return tf.neg(tf.mean(tf.sum(tf.mul(tf.logSoftmax(logits), targets), -1))) as tf.Scalar;
    });
  const losses: number[] = [];
  for (let s = 0; s < steps; s++) {
    const value = optimizer.minimize(loss, true);
    losses.push(value!.dataSync()[0]!);
    value!.dispose();
  }
  optimizer.dispose();
  tf.dispose([x, targets, mask, ...Object.values(w)]);
  return losses;
}

describeNative('training with native kernels', () => {
  it('20 Adam steps give the same losses (1e-4) with and without native kernels, without leaks', () => {
    const before = tf.memory().numTensors;
    const stock = withStock(() => train(20, 1234));
    expect(tf.memory().numTensors).toBe(before);
    const native = withNative(() => train(20, 1234));
    expect(tf.memory().numTensors).toBe(before);
    expect(native).toHaveLength(20);
    expect(native[19]!).toBeLessThan(native[0]! * 0.9); // it learns
    native.forEach((l, i) => {
      expect(Math.abs(l - stock[i]!)).toBeLessThanOrEqual(1e-4);
    });
  });
});
