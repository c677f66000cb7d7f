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

/**
 * The leading arguments of a native kernel call: the heap view, read now (so after the outputs
 * were allocated), then the byte offset of each tensor in it, in the order given.
 */
export function heapArgs<T extends TensorInfo[]>(
  backend: WasmBackendLike,
  ...tensors: T
): [Uint8Array, ...{ [K in keyof T]: number }] {
  const args = [heap(backend), ...tensors.map((t) => heapOffset(backend, t))];
  return args as [Uint8Array, ...{ [K in keyof T]: number }];
}

/** Number of elements of a shape. */
export function sizeOf(shape: readonly number[]): number {
  let s = 1;
  for (const d of shape) s *= d;
  return s;
}
