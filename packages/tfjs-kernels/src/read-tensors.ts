import * as tf from '@tensorflow/tfjs-core';
import { MULTI_TENSOR_KERNELS } from './webgpu/multi-tensor.js';

/**
 * Float32 copies of tensors' values, read asynchronously (GPU backends in Node have no
 * synchronous read). On a backend with the multi-tensor kernels (webgpu) they are packed into one
 * tensor on the device and read at once: one host read, whose wait drains the queue once, instead
 * of one per tensor. The copies are a snapshot at the call (later assignments do not change them).
 */
export async function readTensors(tensors: readonly tf.Tensor[]): Promise<Float32Array[]> {
  const packable =
    tensors.length > 1 &&
    tf.getKernel(MULTI_TENSOR_KERNELS.pack, tf.getBackend()) !== undefined &&
    tensors.every((t) => t.dtype === 'float32');
  if (!packable) {
    const reads = tensors.map((t) => t.data());
    // Copies: some backends hand out their own storage (the cpu backend does).
    return (await Promise.all(reads)).map((d) => Float32Array.from(d as Float32Array));
  }
  const flat = tf
    .engine()
    .runKernel(MULTI_TENSOR_KERNELS.pack, tensors as unknown as tf.NamedTensorMap) as tf.Tensor;
  const all = (await flat.data()) as Float32Array;
  flat.dispose();
  let o = 0;
  return tensors.map((t) => {
    const part = all.slice(o, o + t.size);
    o += t.size;
    return part;
  });
}
