import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { AttentionSizes, NativeAddon } from '../addon.js';
import { heapArgs, isWasmBackend, sizeOf, type WasmBackendLike } from '../wasm-heap.js';
import type { KernelArgs } from './kernel-context.js';

/** Names of the fused kernels this package adds to the wasm backend (no stock equivalents). */
export const FUSED_KERNELS = {
  logProbStats: 'PoadLogProbStats',
  logProbStatsGrad: 'PoadLogProbStatsGrad',
  rmsNorm: 'PoadRmsNorm',
  rmsNormGrad: 'PoadRmsNormGrad',
  swiGlu: 'PoadSwiGlu',
  swiGluGrad: 'PoadSwiGluGrad',
  rope: 'PoadRope',
  attention: 'PoadAttention',
  attentionGrad: 'PoadAttentionGrad',
} as const;

/** The wasm backend and the named inputs, in order; throws naming the kernel otherwise. */
function wasmArgs<const K extends readonly string[]>(
  args: KernelArgs,
  name: string,
  inputs: K,
): [WasmBackendLike, { -readonly [I in keyof K]: TensorInfo }] {
  const backend = args.backend;
  if (!isWasmBackend(backend)) throw new Error(`${name}: runs only on the wasm backend`);
  const tensors = inputs.map((key) => {
    const t = args.inputs[key];
    if (!t) throw new Error(`${name}: input "${key}" is missing`);
    return t;
  });
  return [backend, tensors as { -readonly [I in keyof K]: TensorInfo }];
}

/** Rows and columns of a tensor read as rows of its last axis. */
function lastAxisRows(x: TensorInfo): { rows: number; cols: number } {
  const cols = x.shape[x.shape.length - 1] ?? 1;
  return { rows: cols === 0 ? 0 : sizeOf(x.shape) / cols, cols };
}

/** logits [n, V] float32, targets [n] int32 → [stats [2n] (log-probs then entropies), lse [n]]. */
function logProbStatsKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [z, t]] = wasmArgs(args, 'logProbStats', ['logits', 'targets']);
    const [rows, cols] = z.shape as [number, number];
    const stats = backend.makeOutput([2 * rows], 'float32');
    const lse = backend.makeOutput([rows], 'float32');
    if (rows > 0) addon.logProbStats(...heapArgs(backend, z, t, stats, lse), rows, cols);
    return [stats, lse];
  };
}

function logProbStatsGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const inputs = ['logits', 'targets', 'lse', 'stats', 'dy'] as const;
    const [backend, [z, t, lse, stats, dy]] = wasmArgs(args, 'logProbStatsGrad', inputs);
    const [rows, cols] = z.shape as [number, number];
    const dz = backend.makeOutput([rows, cols], 'float32');
    if (rows > 0) {
      addon.logProbStatsGrad(...heapArgs(backend, z, t, lse, stats, dy, dz), rows, cols);
    }
    return dz;
  };
}

/** x [..., d], weight [d] → [y (shape of x), rstd [rows]]. Attribute `eps`. */
function rmsNormKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [x, w]] = wasmArgs(args, 'rmsNorm', ['x', 'weight']);
    const { rows, cols } = lastAxisRows(x);
    const y = backend.makeOutput(x.shape, 'float32');
    const rstd = backend.makeOutput([rows], 'float32');
    const eps = Number(args.attrs?.eps ?? 1e-6);
    if (rows > 0) addon.rmsNorm(...heapArgs(backend, x, w, y, rstd), rows, cols, eps);
    return [y, rstd];
  };
}

function rmsNormGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [x, w, rstd, dy]] = wasmArgs(args, 'rmsNormGrad', [
      'x',
      'weight',
      'rstd',
      'dy',
    ]);
    const { rows, cols } = lastAxisRows(x);
    const dx = backend.makeOutput(x.shape, 'float32');
    const dw = backend.makeOutput([cols], 'float32');
    addon.rmsNormGrad(...heapArgs(backend, x, w, rstd, dy, dx, dw), rows, cols);
    return [dx, dw];
  };
}

/** gate, up (same shape) → gate · sigmoid(gate) · up. */
function swiGluKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [g, u]] = wasmArgs(args, 'swiGlu', ['gate', 'up']);
    const y = backend.makeOutput(g.shape, 'float32');
    const size = sizeOf(g.shape);
    if (size > 0) addon.swiGlu(...heapArgs(backend, g, u, y), size);
    return y;
  };
}

function swiGluGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [g, u, dy]] = wasmArgs(args, 'swiGluGrad', ['gate', 'up', 'dy']);
    const dg = backend.makeOutput(g.shape, 'float32');
    const du = backend.makeOutput(g.shape, 'float32');
    const size = sizeOf(g.shape);
    if (size > 0) addon.swiGluGrad(...heapArgs(backend, g, u, dy, dg, du), size);
    return [dg, du];
  };
}

/**
 * x [rows, heads·2·half], cos and sin [rows, half] → rotated x. Attributes `heads` and
 * `transpose` (the gradient map: sin negated).
 */
function ropeKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [x, cos, sin]] = wasmArgs(args, 'rope', ['x', 'cos', 'sin']);
    const [rows, width] = x.shape as [number, number];
    const heads = Number(args.attrs?.heads ?? 1);
    const transpose = args.attrs?.transpose === true;
    const y = backend.makeOutput(x.shape, 'float32');
    if (rows > 0 && width > 0) {
      addon.rope(...heapArgs(backend, x, cos, sin, y), rows, heads, width / heads / 2, transpose);
    }
    return y;
  };
}

/**
 * Attention sizes from the attributes `batch`, `heads`, `kvHeads`, `scale` and q's shape, with
 * `sizes`, the trailing arguments of the native `attention` and `attentionGrad`.
 */
function attentionDims(args: KernelArgs, q: TensorInfo) {
  const [rows, width] = q.shape as [number, number];
  const batch = Number(args.attrs?.batch);
  const heads = Number(args.attrs?.heads);
  const kvHeads = Number(args.attrs?.kvHeads);
  const scale = Number(args.attrs?.scale);
  const seq = rows / batch;
  const sizes: AttentionSizes = [batch, seq, heads, kvHeads, width / heads, scale];
  return { rows, width, batch, heads, seq, sizes };
}

/**
 * q [batch·seq, heads·hd], k and v [batch·seq, kvHeads·hd], mask [batch, seq, seq] →
 * [out (shape of q), probs [batch, heads, seq, seq]]. Attributes `batch`, `heads`, `kvHeads`,
 * `scale`.
 */
function attentionKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [q, k, v, mask]] = wasmArgs(args, 'attention', ['q', 'k', 'v', 'mask']);
    const d = attentionDims(args, q);
    const out = backend.makeOutput([d.rows, d.width], 'float32');
    const probs = backend.makeOutput([d.batch, d.heads, d.seq, d.seq], 'float32');
    if (d.rows > 0) addon.attention(...heapArgs(backend, q, k, v, mask, out, probs), ...d.sizes);
    return [out, probs];
  };
}

/** q, k, v, probs (from the forward), dy (shape of q) → [dq, dk, dv]. Same attributes. */
function attentionGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const inputs = ['q', 'k', 'v', 'probs', 'dy'] as const;
    const [backend, [q, k, v, probs, dy]] = wasmArgs(args, 'attentionGrad', inputs);
    const d = attentionDims(args, q);
    const dq = backend.makeOutput(q.shape, 'float32');
    const dk = backend.makeOutput(k.shape, 'float32');
    const dv = backend.makeOutput(v.shape, 'float32');
    if (d.rows > 0) {
      addon.attentionGrad(...heapArgs(backend, q, k, v, probs, dy, dq, dk, dv), ...d.sizes);
    }
    return [dq, dk, dv];
  };
}

/** Kernel functions of the fused kernels, by kernel name. */
export function fusedKernelFuncs(addon: NativeAddon): Record<string, KernelFunc> {
  return {
    [FUSED_KERNELS.logProbStats]: logProbStatsKernel(addon),
    [FUSED_KERNELS.logProbStatsGrad]: logProbStatsGradKernel(addon),
    [FUSED_KERNELS.rmsNorm]: rmsNormKernel(addon),
    [FUSED_KERNELS.rmsNormGrad]: rmsNormGradKernel(addon),
    [FUSED_KERNELS.swiGlu]: swiGluKernel(addon),
    [FUSED_KERNELS.swiGluGrad]: swiGluGradKernel(addon),
    [FUSED_KERNELS.rope]: ropeKernel(addon),
    [FUSED_KERNELS.attention]: attentionKernel(addon),
    [FUSED_KERNELS.attentionGrad]: attentionGradKernel(addon),
  };
}
