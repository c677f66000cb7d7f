import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { planMatMul } from '../matmul-plan.js';
import { heapArgs, isWasmBackend, sizeOf } from '../wasm-heap.js';
import { boolAttr, type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/**
 * `BatchMatMul` through CBLAS `sgemm`, for every transpose combination and broadcast batch
 * shape. Non-float32 inputs go to the stock kernel.
 */
export function batchMatMulKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { a, b } = args.inputs;
    const backend = args.backend;
    if (!a || !b || !isWasmBackend(backend) || a.dtype !== 'float32' || b.dtype !== 'float32') {
      return runStock(ctx, args, 'this BatchMatMul input');
    }
    const plan = planMatMul(
      a.shape,
      b.shape,
      boolAttr(args.attrs, 'transposeA'),
      boolAttr(args.attrs, 'transposeB'),
    );
    const out = backend.makeOutput(plan.outShape, 'float32');
    if (sizeOf(plan.outShape) === 0) return out;
    ctx.addon.gemm(
      ...heapArgs(backend, a, b, out),
      plan.batch,
      plan.m,
      plan.n,
      plan.k,
      boolAttr(args.attrs, 'transposeA'),
      boolAttr(args.attrs, 'transposeB'),
      plan.aBatch,
      plan.bBatch,
      plan.aIndex,
      plan.bIndex,
    );
    return out;
  };
}
