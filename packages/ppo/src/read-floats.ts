import type * as tf from '@tensorflow/tfjs-core';
import { multiTensorKernels, packFlat } from './multi-tensor.js';

/**
 * Float32 copies of tensors' values, read asynchronously so that backends without synchronous
 * reads (WebGPU in Node) serve them too. Every read is started before the first await, so the
 * copies are one consistent snapshot even if the tensors are variables assigned afterwards. With
 * multi-tensor kernels (webgpu) float32 tensors are packed into one and read at once: one host
 * read, not one per tensor.
 */
export async function readFloats(tensors: readonly tf.Tensor[]): Promise<Float32Array[]> {
  if (tensors.length > 1 && multiTensorKernels() && tensors.every((t) => t.dtype === 'float32')) {
    const flat = packFlat(tensors);
    const all = (await flat.data()) as Float32Array;
    flat.dispose();
    let o = 0;
    return tensors.map((t) => {
      const part = all.slice(o, o + t.size);
      o += t.size;
      return part;
    });
  }
  const reads = tensors.map((t) => t.data());
  // Copies: some backends hand out their own storage (the cpu backend does).
  return (await Promise.all(reads)).map((d) => Float32Array.from(d as Float32Array));
}
