import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

interface RefCountingBackend {
  incRef(dataId: object): void;
}

/**
 * `Identity` that shares the input's data (one more reference) instead of copying it, as the
 * cpu backend and the wasm `Reshape` kernel do. TF.js clones every tensor a gradient saves, so
 * a training step runs hundreds of these. No kernel writes into its inputs, so sharing is safe.
 */
export function identityKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { x } = args.inputs;
    const backend = args.backend as Partial<RefCountingBackend>;
    if (!x || x.dtype === 'string' || typeof backend.incRef !== 'function') {
      return runStock(ctx, args, 'this Identity input');
    }
    backend.incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  };
}
