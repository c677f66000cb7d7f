import * as tf from '@tensorflow/tfjs-core';

interface ReadableBackend {
  readSync(dataId: object): ArrayLike<number>;
  makeTensorInfo?(shape: number[], dtype: tf.DataType, values: Float32Array): tf.TensorInfo;
  makeOutput?(
    shape: number[],
    dtype: tf.DataType,
    memoryOffset: undefined,
    values: Float32Array,
  ): tf.TensorInfo;
}

/**
 * Scatter-add of rows: the gradient of `tf.gather`, needed to train an embedding. The wasm backend
 * has no `UnsortedSegmentSum` kernel and the cpu one loops once per segment; this one makes one
 * pass over the input.
 */
function segmentSumKernel(args: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}): tf.TensorInfo {
  const { x, segmentIds } = args.inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const numSegments = (args.attrs as { numSegments: number }).numSegments;
  const backend = args.backend as ReadableBackend;
  const xv = backend.readSync(x.dataId);
  const ids = backend.readSync(segmentIds.dataId);
  const rowSize = ids.length === 0 ? 0 : xv.length / ids.length;
  const outShape = [numSegments, ...x.shape.slice(segmentIds.shape.length)];
  const out = new Float32Array(numSegments * rowSize);
  for (let i = 0; i < ids.length; i++) {
    const s = ids[i] as number;
    if (s < 0 || s >= numSegments) continue;
    const src = i * rowSize;
    const dst = s * rowSize;
    for (let j = 0; j < rowSize; j++)
      out[dst + j] = (out[dst + j] as number) + (xv[src + j] as number);
  }
  // The wasm backend allocates outputs with makeOutput(shape, dtype, offset, values); the cpu
  // backend's makeOutput has another signature, so it goes through makeTensorInfo.
  if (tf.getBackend() === 'wasm' && backend.makeOutput) {
    return backend.makeOutput(outShape, 'float32', undefined, out);
  }
  if (backend.makeTensorInfo) return backend.makeTensorInfo(outShape, 'float32', out);
  throw new Error('UnsortedSegmentSum: backend cannot create outputs from values');
}

const patched = new Set<string>();

/**
 * Register the fast `UnsortedSegmentSum` kernel for the `wasm` and `cpu` backends (idempotent).
 * Needed only for full fine-tuning, where the embedding is trainable.
 */
export function registerSegmentSumKernel(backendName: string = tf.getBackend()): void {
  if (backendName !== 'wasm' && backendName !== 'cpu') return;
  if (patched.has(backendName)) return;
  if (tf.getKernel('UnsortedSegmentSum', backendName)) {
    tf.unregisterKernel('UnsortedSegmentSum', backendName);
  }
  tf.registerKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName,
    kernelFunc: segmentSumKernel as unknown as tf.KernelFunc,
  });
  patched.add(backendName);
}
