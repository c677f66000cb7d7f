import type { TensorInfo } from '@tensorflow/tfjs-core';
import { isWasmBackend, type WasmBackendLike } from '../wasm-heap.js';

/** Blocks shorter than this are copied element by element; longer ones with `copyWithin`. */
const BLOCK_COPY_MIN = 32;

/** Element types the copy kernels move as raw 4-byte words. */
export function isWordType(t: TensorInfo): boolean {
  return t.dtype === 'float32' || t.dtype === 'int32';
}

/** The backend as a wasm backend when every tensor is made of 4-byte words, else null. */
export function wordBackend(backend: unknown, tensors: TensorInfo[]): WasmBackendLike | null {
  return isWasmBackend(backend) && tensors.every(isWordType) ? backend : null;
}

/**
 * Copy `rows` blocks of `block` words: block r goes from `src + r·srcStride` to
 * `dst + r·dstStride` (all in words, within one heap view).
 */
export function copyBlocks(
  words: Int32Array,
  src: number,
  srcStride: number,
  dst: number,
  dstStride: number,
  rows: number,
  block: number,
): void {
  if (block === 0) return;
  if (block === srcStride && block === dstStride) {
    words.copyWithin(dst, src, src + rows * block);
    return;
  }
  for (let r = 0; r < rows; r++) {
    const from = src + r * srcStride;
    const to = dst + r * dstStride;
    if (block >= BLOCK_COPY_MIN) words.copyWithin(to, from, from + block);
    else for (let j = 0; j < block; j++) words[to + j] = words[from + j]!;
  }
}

/** Product of `shape[from..to)`. */
export function span(shape: readonly number[], from: number, to = shape.length): number {
  let p = 1;
  for (let i = from; i < to; i++) p *= shape[i]!;
  return p;
}
