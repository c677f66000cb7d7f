import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import type { NativeAddon } from '../addon.js';
import { heap, heapOffset, isWasmBackend, sizeOf, type WasmBackendLike } from '../wasm-heap.js';
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

function wasmArgs(
  args: KernelArgs,
  name: string,
  inputs: string[],
): [WasmBackendLike, TensorInfo[]] {
  const backend = args.backend;
  if (!isWasmBackend(backend)) throw new Error(`${name}: runs only on the wasm backend`);
  const tensors = inputs.map((key) => {
    const t = args.inputs[key];
    if (!t) throw new Error(`${name}: input "${key}" is missing`);
    return t;
  });
  return [backend, tensors];
}

/** logits [n, V] float32, targets [n] int32 → [stats [2n] (log-probs then entropies), lse [n]]. */
function logProbStatsKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [z, t]] = wasmArgs(args, 'logProbStats', ['logits', 'targets']);
    const [rows, cols] = z!.shape as [number, number];
    const stats = backend.makeOutput([2 * rows], 'float32');
    const lse = backend.makeOutput([rows], 'float32');
    if (rows > 0) {
      addon.logProbStats(
        heap(backend),
        heapOffset(backend, z!),
        heapOffset(backend, t!),
        heapOffset(backend, stats),
        heapOffset(backend, lse),
        rows,
        cols,
      );
    }
    return [stats, lse];
  };
}

function logProbStatsGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [z, t, lse, stats, dy]] = wasmArgs(args, 'logProbStatsGrad', [
      'logits',
      'targets',
      'lse',
      'stats',
      'dy',
    ]);
    const [rows, cols] = z!.shape as [number, number];
    const dz = backend.makeOutput([rows, cols], 'float32');
    if (rows > 0) {
      addon.logProbStatsGrad(
        heap(backend),
        heapOffset(backend, z!),
        heapOffset(backend, t!),
        heapOffset(backend, lse!),
        heapOffset(backend, stats!),
        heapOffset(backend, dy!),
        heapOffset(backend, dz),
        rows,
        cols,
      );
    }
    return dz;
  };
}

/** x [..., d], weight [d] → [y (shape of x), rstd [rows]]. Attribute `eps`. */
function rmsNormKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [x, w]] = wasmArgs(args, 'rmsNorm', ['x', 'weight']);
    const cols = x!.shape[x!.shape.length - 1] ?? 1;
    const rows = cols === 0 ? 0 : sizeOf(x!.shape) / cols;
    const y = backend.makeOutput(x!.shape, 'float32');
    const rstd = backend.makeOutput([rows], 'float32');
    if (rows > 0) {
      addon.rmsNorm(
        heap(backend),
        heapOffset(backend, x!),
        heapOffset(backend, w!),
        heapOffset(backend, y),
        heapOffset(backend, rstd),
        rows,
        cols,
        Number(args.attrs?.eps ?? 1e-6),
      );
    }
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
    const cols = x!.shape[x!.shape.length - 1] ?? 1;
    const rows = cols === 0 ? 0 : sizeOf(x!.shape) / cols;
    const dx = backend.makeOutput(x!.shape, 'float32');
    const dw = backend.makeOutput([cols], 'float32');
    addon.rmsNormGrad(
      heap(backend),
      heapOffset(backend, x!),
      heapOffset(backend, w!),
      heapOffset(backend, rstd!),
      heapOffset(backend, dy!),
      heapOffset(backend, dx),
      heapOffset(backend, dw),
      rows,
      cols,
    );
    return [dx, dw];
  };
}

/** gate, up (same shape) → gate · sigmoid(gate) · up. */
function swiGluKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [g, u]] = wasmArgs(args, 'swiGlu', ['gate', 'up']);
    const y = backend.makeOutput(g!.shape, 'float32');
    const size = sizeOf(g!.shape);
    if (size > 0) {
      addon.swiGlu(
        heap(backend),
        heapOffset(backend, g!),
        heapOffset(backend, u!),
        heapOffset(backend, y),
        size,
      );
    }
    return y;
  };
}

function swiGluGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [g, u, dy]] = wasmArgs(args, 'swiGluGrad', ['gate', 'up', 'dy']);
    const dg = backend.makeOutput(g!.shape, 'float32');
    const du = backend.makeOutput(g!.shape, 'float32');
    const size = sizeOf(g!.shape);
    if (size > 0) {
      addon.swiGluGrad(
        heap(backend),
        heapOffset(backend, g!),
        heapOffset(backend, u!),
        heapOffset(backend, dy!),
        heapOffset(backend, dg),
        heapOffset(backend, du),
        size,
      );
    }
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
    const [rows, width] = x!.shape as [number, number];
    const heads = Number(args.attrs?.heads ?? 1);
    const y = backend.makeOutput(x!.shape, 'float32');
    if (rows > 0 && width > 0) {
      addon.rope(
        heap(backend),
        heapOffset(backend, x!),
        heapOffset(backend, cos!),
        heapOffset(backend, sin!),
        heapOffset(backend, y),
        rows,
        heads,
        width / heads / 2,
        args.attrs?.transpose === true,
      );
    }
    return y;
  };
}

/** Attention sizes from the attributes `batch`, `heads`, `kvHeads`, `scale` and q's shape. */
function attentionDims(args: KernelArgs, q: TensorInfo) {
  const [rows, width] = q.shape as [number, number];
  const batch = Number(args.attrs?.batch);
  const heads = Number(args.attrs?.heads);
  const kvHeads = Number(args.attrs?.kvHeads);
  const scale = Number(args.attrs?.scale);
  return { rows, width, batch, heads, kvHeads, scale, seq: rows / batch, hd: width / heads };
}

/**
 * q [batch·seq, heads·hd], k and v [batch·seq, kvHeads·hd], mask [batch, seq, seq] →
 * [out (shape of q), probs [batch, heads, seq, seq]]. Attributes `batch`, `heads`, `kvHeads`,
 * `scale`.
 */
function attentionKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [q, k, v, mask]] = wasmArgs(args, 'attention', ['q', 'k', 'v', 'mask']);
    const d = attentionDims(args, q!);
    const out = backend.makeOutput([d.rows, d.width], 'float32');
    const probs = backend.makeOutput([d.batch, d.heads, d.seq, d.seq], 'float32');
    if (d.rows > 0) {
      addon.attention(
        heap(backend),
        heapOffset(backend, q!),
        heapOffset(backend, k!),
        heapOffset(backend, v!),
        heapOffset(backend, mask!),
        heapOffset(backend, out),
        heapOffset(backend, probs),
        d.batch,
        d.seq,
        d.heads,
        d.kvHeads,
        d.hd,
        d.scale,
      );
    }
    return [out, probs];
  };
}

/** q, k, v, probs (from the forward), dy (shape of q) → [dq, dk, dv]. Same attributes. */
function attentionGradKernel(addon: NativeAddon): KernelFunc {
  return (args) => {
    const [backend, [q, k, v, probs, dy]] = wasmArgs(args, 'attentionGrad', [
      'q',
      'k',
      'v',
      'probs',
      'dy',
    ]);
    const d = attentionDims(args, q!);
    const dq = backend.makeOutput(q!.shape, 'float32');
    const dk = backend.makeOutput(k!.shape, 'float32');
    const dv = backend.makeOutput(v!.shape, 'float32');
    if (d.rows > 0) {
      addon.attentionGrad(
        heap(backend),
        heapOffset(backend, q!),
        heapOffset(backend, k!),
        heapOffset(backend, v!),
        heapOffset(backend, probs!),
        heapOffset(backend, dy!),
        heapOffset(backend, dq),
        heapOffset(backend, dk),
        heapOffset(backend, dv),
        d.batch,
        d.seq,
        d.heads,
        d.kvHeads,
        d.hd,
        d.scale,
      );
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
