import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { heapArgs, isWasmBackend, sizeOf } from '../wasm-heap.js';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/**
 * `Softmax` (attribute `dim`) or `LogSoftmax` (attribute `axis`) over the last axis, one native
 * pass per row; rows are spread over threads for large inputs. Other axes go to the stock kernel.
 */
export function softmaxKernel(ctx: KernelContext, log: boolean): KernelFunc {
  const attrName = log ? 'axis' : 'dim';
  const kernelName = log ? 'LogSoftmax' : 'Softmax';
  return (args: KernelArgs): TensorInfo => {
    const x = args.inputs.logits;
    const backend = args.backend;
    const rank = x?.shape.length ?? 0;
    const axis = Number(args.attrs?.[attrName] ?? -1);
    if (
      !x ||
      !isWasmBackend(backend) ||
      x.dtype !== 'float32' ||
      rank === 0 ||
      (axis !== -1 && axis !== rank - 1)
    ) {
      return runStock(ctx, args, `this ${kernelName} input (axis ${axis}, rank ${rank})`);
    }
    const out = backend.makeOutput(x.shape, 'float32');
    const size = sizeOf(x.shape);
    const cols = x.shape[rank - 1]!;
    if (size > 0) {
      ctx.addon.softmax(...heapArgs(backend, x, out), size / cols, cols, log);
    }
    return out;
  };
}
