import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import { planMatMul } from '../matmul-plan.js';
import { heap, heapOffset, isWasmBackend, sizeOf } from '../wasm-heap.js';
import { boolAttr, type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

/** Activation codes understood by the addon's epilogue. */
const ACTIVATIONS: Record<string, number> = {
  linear: 0,
  relu: 1,
  relu6: 2,
  leakyrelu: 3,
  elu: 4,
  sigmoid: 5,
  prelu: 6,
};

/**
 * How a bias broadcasts onto an output of shape `out`: 0 none, 1 scalar, `n` one value per
 * column, the output size for a full bias, or -1 for any other broadcast (left to the stock kernel).
 */
export function biasLayout(bias: readonly number[] | undefined, out: readonly number[]): number {
  if (!bias) return 0;
  const size = sizeOf(bias);
  if (size === 1) return 1;
  const n = out[out.length - 1] ?? 1;
  const lead = bias.slice(0, -1);
  if (bias[bias.length - 1] === n && sizeOf(lead) === 1 && bias.length <= out.length) return n;
  if (bias.length <= out.length) {
    const offset = out.length - bias.length;
    if (bias.every((d, i) => d === out[offset + i]) && size === sizeOf(out)) return size;
  }
  return -1;
}

/**
 * `_FusedMatMul`: the GEMM of {@link batchMatMulKernel} followed by bias and activation in one
 * native pass. Biases and PReLU slopes broadcast as a scalar, per column or in full; other
 * layouts and non-float32 inputs go to the stock kernel.
 */
export function fusedMatMulKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { a, b, bias, preluActivationWeights: prelu } = args.inputs;
    const backend = args.backend;
    const activation = String(args.attrs?.activation ?? 'linear');
    const code = ACTIVATIONS[activation];
    if (
      !a ||
      !b ||
      !isWasmBackend(backend) ||
      code === undefined ||
      a.dtype !== 'float32' ||
      b.dtype !== 'float32' ||
      (bias && bias.dtype !== 'float32') ||
      (prelu && prelu.dtype !== 'float32') ||
      (activation === 'prelu' && !prelu)
    ) {
      return runStock(ctx, args, `this _FusedMatMul input (activation ${activation})`);
    }
    const transposeA = boolAttr(args.attrs, 'transposeA');
    const transposeB = boolAttr(args.attrs, 'transposeB');
    const plan = planMatMul(a.shape, b.shape, transposeA, transposeB);
    const layout = biasLayout(bias?.shape, plan.outShape);
    const preluLayout = activation === 'prelu' ? biasLayout(prelu?.shape, plan.outShape) : 0;
    if (layout < 0 || preluLayout < 0) {
      return runStock(ctx, args, `a bias [${bias?.shape}] or PReLU weights [${prelu?.shape}]`);
    }
    const out = backend.makeOutput(plan.outShape, 'float32');
    const size = sizeOf(plan.outShape);
    if (size === 0) return out;
    const memory = heap(backend);
    const outOffset = heapOffset(backend, out);
    ctx.addon.gemm(
      memory,
      heapOffset(backend, a),
      heapOffset(backend, b),
      outOffset,
      plan.batch,
      plan.m,
      plan.n,
      plan.k,
      transposeA,
      transposeB,
      plan.aBatch,
      plan.bBatch,
      plan.aIndex,
      plan.bIndex,
    );
    if (layout === 0 && code === 0) return out;
    const alpha = Number(args.attrs?.leakyreluAlpha ?? 0.2);
    ctx.addon.epilogue(
      memory,
      outOffset,
      size,
      plan.n,
      bias && layout > 0 ? heapOffset(backend, bias) : 0,
      layout,
      code,
      alpha,
      prelu && preluLayout > 0 ? heapOffset(backend, prelu) : 0,
      preluLayout,
    );
    return out;
  };
}
