import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { heap, heapOffset, isWasmBackend, sizeOf } from '../wasm-heap.js';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/** Rows shorter than this are copied element by element; longer ones with `copyWithin`. */
const BLOCK_COPY_MIN = 32;

/**
 * `GatherV2` (`batchDims` 0, 4-byte dtypes) as slice copies inside the wasm heap. The stock wasm
 * kernel walks every element with stride arithmetic: an embedding lookup of 1,024 rows of 256
 * takes milliseconds there. Out-of-range indices go to the stock kernel, which reports them.
 */
export function gatherKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { x, indices } = args.inputs;
    const backend = args.backend;
    const batchDims = Number(args.attrs?.batchDims ?? 0);
    const rank = x?.shape.length ?? 0;
    let axis = Number(args.attrs?.axis ?? 0);
    if (axis < 0) axis += rank;
    if (
      !x ||
      !indices ||
      !isWasmBackend(backend) ||
      batchDims !== 0 ||
      (x.dtype !== 'float32' && x.dtype !== 'int32') ||
      indices.dtype !== 'int32' ||
      axis < 0 ||
      axis >= rank
    ) {
      return runStock(ctx, args, 'this GatherV2 input');
    }
    const dim = x.shape[axis]!;
    const count = sizeOf(indices.shape);
    const ids = new Int32Array(heap(backend).buffer, heapOffset(backend, indices), count).slice();
    for (const id of ids) {
      if (id < 0 || id >= dim) return runStock(ctx, args, `index ${id} outside [0, ${dim})`);
    }
    const outer = sizeOf(x.shape.slice(0, axis));
    const inner = sizeOf(x.shape.slice(axis + 1));
    const out = backend.makeOutput(
      [...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)],
      x.dtype,
    );
    if (outer * count * inner === 0) return out;
    // Read the heap after the allocation: it may have grown.
    const mem = heap(backend);
    const src = heapOffset(backend, x) >>> 2;
    const dst = heapOffset(backend, out) >>> 2;
    const words = new Int32Array(mem.buffer);
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < count; i++) {
        const from = src + (o * dim + ids[i]!) * inner;
        const to = dst + (o * count + i) * inner;
        if (inner >= BLOCK_COPY_MIN) words.copyWithin(to, from, from + inner);
        else for (let j = 0; j < inner; j++) words[to + j] = words[from + j]!;
      }
    }
    return out;
  };
}
