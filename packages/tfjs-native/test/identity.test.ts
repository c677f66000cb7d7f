import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  isNativeAvailable,
  nativeUnavailableReason,
  unregisterNativeKernels,
} from '../src/index.js';
import { runNative, useWasm, withNative } from './helpers.js';

describe.runIf(runNative)('Identity shares data', () => {
  beforeAll(async () => {
    expect(isNativeAvailable(), nativeUnavailableReason() ?? '').toBe(true);
    await useWasm();
    return () => {
      unregisterNativeKernels();
    };
  });

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
