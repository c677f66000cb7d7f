import type { KernelConfig, KernelFunc } from '@tensorflow/tfjs-core';
import * as tf from '@tensorflow/tfjs-core';
import { getNativeAddon, getNativeInfo, nativeUnavailableReason } from './addon.js';
import { batchMatMulKernel } from './kernels/batch-mat-mul.js';
import { expKernel } from './kernels/exp.js';
import { fusedMatMulKernel } from './kernels/fused-mat-mul.js';
import { FUSED_KERNELS, fusedKernelFuncs } from './kernels/fused-ops.js';
import { gatherKernel } from './kernels/gather.js';
import { identityKernel } from './kernels/identity.js';
import type { KernelContext } from './kernels/kernel-context.js';
import { segmentSumKernel } from './kernels/segment-sum.js';
import { softmaxKernel } from './kernels/softmax.js';
import { concatKernel, sliceKernel, splitKernel } from './kernels/split-concat-slice.js';

/** Result of {@link registerNativeKernels}. */
export interface NativeKernelsResult {
  /**
   * Kernel names now served natively (empty when nothing was registered): the replaced stock
   * kernels, then the added fused kernels (`Poad*`).
   */
  kernels: string[];
  /** Human-readable summary, e.g. `wasm + native kernels (OpenBLAS, 2 threads)`. */
  description: string;
  /** Why nothing was registered, with the fix; `null` on success. */
  reason: string | null;
}

/** Options of {@link registerNativeKernels}. */
export interface NativeKernelsOptions {
  /**
   * Also register the fused kernels behind {@link FUSED_KERNEL_NAMES} (used by `rmsNorm`,
   * `rotaryEmbedding`, `swiGlu`, `logProbStats` and `attention`). Default true; with false
   * those ops use TF.js ops.
   */
  fusedOps?: boolean;
}

/** The native kernel for each stock TF.js kernel this package replaces, in registration order. */
const NATIVE_KERNELS: Record<string, (ctx: KernelContext) => KernelFunc> = {
  BatchMatMul: batchMatMulKernel,
  _FusedMatMul: fusedMatMulKernel,
  Exp: expKernel,
  Softmax: (ctx) => softmaxKernel(ctx, false),
  LogSoftmax: (ctx) => softmaxKernel(ctx, true),
  GatherV2: gatherKernel,
  Identity: identityKernel,
  SplitV: splitKernel,
  Concat: concatKernel,
  Slice: sliceKernel,
  UnsortedSegmentSum: segmentSumKernel,
};

/** Stock TF.js kernels this package replaces, in registration order. */
export const NATIVE_KERNEL_NAMES: readonly string[] = Object.keys(NATIVE_KERNELS);

/** Kernels this package adds (forward/backward pairs used by its fused ops). */
export const FUSED_KERNEL_NAMES: readonly string[] = Object.values(FUSED_KERNELS);

const BACKEND = 'wasm';

/** For each kernel served natively: our kernel function and the config it replaced, if any. */
const replaced = new Map<string, { mine: KernelFunc; previous: KernelConfig | undefined }>();

/** Whether the kernel registered now for `name` is ours. */
function isMine(name: string): boolean {
  const entry = replaced.get(name);
  return entry !== undefined && tf.getKernel(name, BACKEND)?.kernelFunc === entry.mine;
}

function makeKernel(name: string, ctx: KernelContext): KernelFunc {
  return fusedKernelFuncs(ctx.addon)[name] ?? NATIVE_KERNELS[name]!(ctx);
}

function describe(): string {
  const info = getNativeInfo();
  if (!info) return 'wasm';
  const threads = info.blasThreads > 0 ? info.blasThreads : info.elementwiseThreads;
  return `wasm + native kernels (${info.blas}, ${threads} thread${threads === 1 ? '' : 's'})`;
}

function unavailable(reason: string): NativeKernelsResult {
  return { kernels: [], description: 'wasm', reason };
}

/**
 * Serve TF.js `wasm` kernels natively, in place on the wasm heap: matrix products on the system
 * BLAS; `Exp`, `Softmax`, `LogSoftmax` as vectorised C; `GatherV2`, `Identity`, `SplitV`,
 * `Concat`, `Slice` and `UnsortedSegmentSum` (which wasm lacks) as heap copies; plus the fused
 * kernels of {@link FUSED_KERNEL_NAMES}. A kernel registered earlier (stock or not) is kept and
 * put back by {@link unregisterNativeKernels}. Import `@tensorflow/tfjs-backend-wasm` first. Call it before or after `tf.setBackend('wasm')`.
 * Idempotent. Does nothing (and says why in `reason`) when `POAD_NATIVE_KERNELS=0`, when the
 * backend is not `wasm`, or when the addon is not built.
 */
export function registerNativeKernels(
  backendName: string = BACKEND,
  options: NativeKernelsOptions = {},
): NativeKernelsResult {
  if (process.env.POAD_NATIVE_KERNELS === '0') {
    return unavailable('native kernels disabled by POAD_NATIVE_KERNELS=0');
  }
  if (backendName !== BACKEND) {
    return unavailable(`native kernels only extend the wasm backend, not "${backendName}"`);
  }
  const addon = getNativeAddon();
  if (!addon) return unavailable(nativeUnavailableReason() ?? 'native addon unavailable');
  if (!tf.getKernel('BatchMatMul', BACKEND)) {
    return unavailable(
      'the wasm backend is not loaded: import "@tensorflow/tfjs-backend-wasm" before registerNativeKernels()',
    );
  }
  const names =
    options.fusedOps === false
      ? NATIVE_KERNEL_NAMES
      : [...NATIVE_KERNEL_NAMES, ...FUSED_KERNEL_NAMES];
  for (const name of names) {
    if (isMine(name)) continue;
    // Whatever is registered now (the stock kernel, or one registered by other code after an
    // earlier call) is what unregisterNativeKernels() puts back.
    const stock = tf.getKernel(name, BACKEND);
    const kernelFunc = makeKernel(name, { addon, stock });
    if (stock) tf.unregisterKernel(name, BACKEND);
    const config: KernelConfig = { kernelName: name, backendName: BACKEND, kernelFunc };
    // The stock setup wires wasm functions the fallback path calls; keep it for when the
    // backend initialises after this registration.
    if (stock?.setupFunc) config.setupFunc = stock.setupFunc;
    if (stock?.disposeFunc) config.disposeFunc = stock.disposeFunc;
    tf.registerKernel(config);
    replaced.set(name, { mine: kernelFunc, previous: stock });
  }
  return { kernels: nativeKernelsRegistered(), description: describe(), reason: null };
}

/**
 * Put back the kernels that {@link registerNativeKernels} replaced. A kernel that other code has
 * registered since is left as it is. Returns the names handled.
 */
export function unregisterNativeKernels(): string[] {
  const names = [...replaced.keys()];
  for (const [name, { previous }] of replaced) {
    if (!isMine(name)) continue;
    tf.unregisterKernel(name, BACKEND);
    if (previous) tf.registerKernel(previous);
  }
  replaced.clear();
  return names;
}

/** Names of the kernels currently served natively. */
export function nativeKernelsRegistered(): string[] {
  return [...replaced.keys()].filter(isMine);
}

/** Whether the fused kernel `name` is registered and the wasm backend is active. */
export function fusedKernelActive(name: string): boolean {
  return isMine(name) && tf.getBackend() === BACKEND;
}
