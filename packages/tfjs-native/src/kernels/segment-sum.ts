import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { heap, heapOffset, isWasmBackend } from '../wasm-heap.js';
import { span } from './block-copy.js';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/**
 * `UnsortedSegmentSum` (the gradient of `gather`, e.g. of an embedding) as one pass of row
 * additions in the heap: `out[ids[i]] += x[i]`. Ids outside `[0, numSegments)` are dropped, as in
 * TensorFlow. The stock wasm backend has no such kernel.
 */
export function segmentSumKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { x, segmentIds } = args.inputs;
    const backend = args.backend;
    const numSegments = Number(args.attrs?.numSegments ?? 0);
    if (
      !x ||
      !segmentIds ||
      !isWasmBackend(backend) ||
      x.dtype !== 'float32' ||
      segmentIds.dtype !== 'int32' ||
      !Number.isInteger(numSegments) ||
      numSegments < 0 ||
      segmentIds.shape.some((d, i) => d !== x.shape[i])
    ) {
      return runStock(ctx, args, 'this UnsortedSegmentSum input');
    }
    const count = span(segmentIds.shape, 0);
    const row = span(x.shape, segmentIds.shape.length);
    const out = backend.makeOutput(
      [numSegments, ...x.shape.slice(segmentIds.shape.length)],
      'float32',
    );
    const mem = heap(backend).buffer;
    const dst = new Float32Array(mem, heapOffset(backend, out), numSegments * row);
    dst.fill(0);
    const src = new Float32Array(mem, heapOffset(backend, x), count * row);
    const ids = new Int32Array(mem, heapOffset(backend, segmentIds), count);
    for (let i = 0; i < count; i++) {
      const s = ids[i]!;
      if (s < 0 || s >= numSegments) continue;
      const from = i * row;
      const to = s * row;
      for (let j = 0; j < row; j++) dst[to + j]! += src[from + j]!;
    }
    return out;
  };
}
