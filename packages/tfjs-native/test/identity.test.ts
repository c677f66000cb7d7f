import * as tf from '@tensorflow/tfjs-core';
import { expect, it } from 'vitest';
import { describeNative, withNative } from './helpers.js';

describeNative('Identity shares data', () => {
  it('clones survive disposing the original, and memory is freed when both go', () => {
    withNative(() => {
      const before = tf.memory();
      const x = tf.tensor2d([1, 2, 3, 4], [2, 2]);
      const y = tf.clone(x);
      expect(tf.memory().numDataBuffers).toBe(before.numDataBuffers + 1); // shared, not copied
      expect(tf.memory().numTensors).toBe(before.numTensors + 2);
      x.dispose();
      expect(Array.from(y.dataSync())).toEqual([1, 2, 3, 4]);
      y.dispose();
      expect(tf.memory().numTensors).toBe(before.numTensors);
      expect(tf.memory().numDataBuffers).toBe(before.numDataBuffers);
      expect(tf.memory().numBytes).toBe(before.numBytes);
    });
  });

  it('keeps variables independent of values assigned from and to them', () => {
    withNative(() => {
      const v = tf.variable(tf.tensor1d([1, 2]));
      const snapshot = tf.clone(v);
      v.assign(tf.tensor1d([5, 6]));
      expect(Array.from(snapshot.dataSync())).toEqual([1, 2]);
      expect(Array.from(v.dataSync())).toEqual([5, 6]);
      tf.dispose([v, snapshot]);
    });
  });
});
