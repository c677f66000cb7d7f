import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { describe, expect, it } from 'vitest';
import {
  isNativeAvailable,
  nativeKernelsRegistered,
  nativeUnavailableReason,
  registerNativeKernels,
  unregisterNativeKernels,
} from '../src/index.js';
import { runNative } from './helpers.js';

describe.runIf(runNative)('registering before the wasm backend initialises', () => {
  it('keeps the stock setup so fallbacks and restored kernels work', async () => {
    expect(isNativeAvailable(), nativeUnavailableReason() ?? '').toBe(true);
    // This file runs in its own process: the backend has not been initialised yet.
    expect(tf.engine().registry.wasm).toBeUndefined();
    const res = registerNativeKernels();
    expect(res.kernels).toContain('Exp');
    expect(res.description).toMatch(/^wasm \+ native kernels \(\w+, \d+ threads?\)$/);
    expect(registerNativeKernels().kernels).toEqual(res.kernels); // idempotent
    await tf.setBackend('wasm');
    // int32 Exp falls back to the stock kernel, which needs its setup to have run.
    const ints = tf.tensor1d([0, 1, 2], 'int32');
    const viaFallback = Array.from(tf.exp(ints).dataSync());
    expect(viaFallback[0]).toBeCloseTo(1, 5);
    expect(viaFallback[2]).toBeCloseTo(Math.exp(2), 4);
    const floats = tf.tensor1d([0, 1, 2]);
    const native = Array.from(tf.exp(floats).dataSync());
    expect(unregisterNativeKernels()).toEqual(res.kernels);
    expect(nativeKernelsRegistered()).toEqual([]);
    const stock = Array.from(tf.exp(floats).dataSync());
    for (let i = 0; i < native.length; i++) expect(native[i]).toBeCloseTo(stock[i]!, 5);
    tf.dispose([ints, floats]);
  });

  it('leaves kernels that other code registered later alone, and restores them', () => {
    const name = 'UnsortedSegmentSum';
    registerNativeKernels();
    const custom: tf.KernelFunc = ({ inputs }) => {
      const x = inputs.x as tf.TensorInfo;
      return tf.zeros([1, ...x.shape.slice(1)]) as unknown as tf.TensorInfo;
    };
    tf.unregisterKernel(name, 'wasm');
    tf.registerKernel({ kernelName: name, backendName: 'wasm', kernelFunc: custom });
    expect(nativeKernelsRegistered()).not.toContain(name);
    unregisterNativeKernels();
    expect(tf.getKernel(name, 'wasm')?.kernelFunc).toBe(custom);
    registerNativeKernels();
    expect(nativeKernelsRegistered()).toContain(name);
    expect(tf.getKernel(name, 'wasm')?.kernelFunc).not.toBe(custom);
    unregisterNativeKernels();
    expect(tf.getKernel(name, 'wasm')?.kernelFunc).toBe(custom);
  });
});
