import type { DataType, TensorInfo } from '@tensorflow/tfjs-core';

/** The parts of tfjs-backend-wasm's `BackendWasm` that the native kernels use. */
export interface WasmBackendLike {
  wasm: { HEAPU8: Uint8Array };
  getMemoryOffset(dataId: object): number;
  makeOutput(shape: number[], dtype: DataType): TensorInfo;
}

/** Whether `backend` looks like the wasm backend (a heap, offsets and an output allocator). */
export function isWasmBackend(backend: unknown): backend is WasmBackendLike {
  const b = backend as Partial<WasmBackendLike> | null;
  return (
    b != null &&
    typeof b.getMemoryOffset === 'function' &&
    typeof b.makeOutput === 'function' &&
    b.wasm != null &&
    b.wasm.HEAPU8 instanceof Uint8Array
  );
}

/** Byte offset of a tensor's data in the wasm heap. */
export function heapOffset(backend: WasmBackendLike, t: TensorInfo): number {
  return backend.getMemoryOffset(t.dataId) >>> 0;
}

/**
 * The current heap view. Read it after every allocation: allocating can grow the wasm memory,
 * which detaches the previous buffer.
 */
export function heap(backend: WasmBackendLike): Uint8Array {
  return backend.wasm.HEAPU8;
}

/** Number of elements of a shape. */
export function sizeOf(shape: readonly number[]): number {
  let s = 1;
  for (const d of shape) s *= d;
  return s;
}
