import type * as tf from '@tensorflow/tfjs-core';

/**
 * Float32 copies of tensors' values, read asynchronously so that backends without synchronous
 * reads (WebGPU in Node) serve them too. Every read is started before the first await, so the
 * copies are one consistent snapshot even if the tensors are variables assigned afterwards.
 */
export async function readFloats(tensors: readonly tf.Tensor[]): Promise<Float32Array[]> {
  const reads = tensors.map((t) => t.data());
  // Copies: some backends hand out their own storage (the cpu backend does).
  return (await Promise.all(reads)).map((d) => Float32Array.from(d as Float32Array));
}
