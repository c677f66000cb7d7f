import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchMatMul, depthwiseBatchMatMul, setBatchMatMulRoute } from '../src/batch-matmul.js';
import { registerGradients } from '../src/gradients.js';

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
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
