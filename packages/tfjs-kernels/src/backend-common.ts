import * as tf from '@tensorflow/tfjs-core';
import { registerGradients } from './gradients.js';
import { registerSegmentSumKernel } from './segment-sum.js';

// What the Node and the browser initBackend share.

/** Makes `name` the active TF.js backend when its factory is registered; false if it fails. */
export async function activate(name: string): Promise<boolean> {
  if (!tf.findBackendFactory(name)) return false;
  try {
    return await tf.setBackend(name);
  } catch {
    return false;
  }
}

/** Waits for the backend and registers this package's kernels and gradients on it. */
export async function finishBackend(backend: string): Promise<void> {
  await tf.ready();
  registerSegmentSumKernel(backend);
  registerGradients();
}
