import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { heapArgs, isWasmBackend, sizeOf } from '../wasm-heap.js';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/** `Exp` with a vectorised native loop (threaded for large tensors). */
export function expKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { x } = args.inputs;
    const backend = args.backend;
    if (!x || !isWasmBackend(backend) || x.dtype !== 'float32') {
      return runStock(ctx, args, 'this Exp input');
    }
    const out = backend.makeOutput(x.shape, 'float32');
    const size = sizeOf(x.shape);
    if (size > 0) ctx.addon.exp(...heapArgs(backend, x, out), size);
    return out;
  };
}
