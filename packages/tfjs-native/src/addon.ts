import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the native addon was built against, as reported by the addon itself. */
export interface NativeBuildInfo {
  /** `OpenBLAS`, `Accelerate` or `CBLAS` (any other CBLAS found through pkg-config). */
  blas: string;
  /** OpenBLAS build configuration string (empty for other BLAS libraries). */
  blasConfig: string;
  /** OpenBLAS core it detected, e.g. `Haswell` (empty for other BLAS libraries). */
  blasCore: string;
  /** Threads the BLAS uses for one product (0 when the library does not say). */
  blasThreads: number;
  /** Threads used by large elementwise kernels (exp, softmax, bias + activation). */
  elementwiseThreads: number;
  /** Whether the AVX2 versions of the elementwise loops run on this CPU. */
  avx2: boolean;
  /** Version of the JS ↔ C calling convention. */
  abiVersion: number;
}

/** The sizes that end the arguments of the native `attention` and `attentionGrad`. */
export type AttentionSizes = [
  batch: number,
  seq: number,
  heads: number,
  kvHeads: number,
  headDim: number,
  scale: number,
];

/** Functions exported by `build/Release/poad_native.node`. Offsets are bytes into the heap. */
export interface NativeAddon {
  gemm(
    heap: Uint8Array,
    aOffset: number,
    bOffset: number,
    cOffset: number,
    batch: number,
    m: number,
    n: number,
    k: number,
    transposeA: boolean,
    transposeB: boolean,
    aBatch: number,
    bBatch: number,
    aIndex: Int32Array | null,
    bIndex: Int32Array | null,
  ): void;
  epilogue(
    heap: Uint8Array,
    cOffset: number,
    size: number,
    n: number,
    biasOffset: number,
    biasSize: number,
    activation: number,
    alpha: number,
    preluOffset: number,
    preluSize: number,
  ): void;
  exp(heap: Uint8Array, xOffset: number, yOffset: number, count: number): void;
  softmax(
    heap: Uint8Array,
    xOffset: number,
    yOffset: number,
    rows: number,
    cols: number,
    log: boolean,
  ): void;
  logProbStats(
    heap: Uint8Array,
    logitsOffset: number,
    targetsOffset: number,
    statsOffset: number,
    lseOffset: number,
    rows: number,
    cols: number,
  ): void;
  logProbStatsGrad(
    heap: Uint8Array,
    logitsOffset: number,
    targetsOffset: number,
    lseOffset: number,
    statsOffset: number,
    dyOffset: number,
    dzOffset: number,
    rows: number,
    cols: number,
  ): void;
  rmsNorm(
    heap: Uint8Array,
    xOffset: number,
    wOffset: number,
    yOffset: number,
    rstdOffset: number,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  rmsNormGrad(
    heap: Uint8Array,
    xOffset: number,
    wOffset: number,
    rstdOffset: number,
    dyOffset: number,
    dxOffset: number,
    dwOffset: number,
    rows: number,
    cols: number,
  ): void;
  swiGlu(
    heap: Uint8Array,
    gateOffset: number,
    upOffset: number,
    yOffset: number,
    count: number,
  ): void;
  swiGluGrad(
    heap: Uint8Array,
    gateOffset: number,
    upOffset: number,
    dyOffset: number,
    dgOffset: number,
    duOffset: number,
    count: number,
  ): void;
  rope(
    heap: Uint8Array,
    xOffset: number,
    cosOffset: number,
    sinOffset: number,
    yOffset: number,
    rows: number,
    heads: number,
    half: number,
    transpose: boolean,
  ): void;
  attention(
    heap: Uint8Array,
    qOffset: number,
    kOffset: number,
    vOffset: number,
    maskOffset: number,
    outOffset: number,
    probsOffset: number,
    ...sizes: AttentionSizes
  ): void;
  attentionGrad(
    heap: Uint8Array,
    qOffset: number,
    kOffset: number,
    vOffset: number,
    probsOffset: number,
    dyOffset: number,
    dqOffset: number,
    dkOffset: number,
    dvOffset: number,
    ...sizes: AttentionSizes
  ): void;
  setThreads(blasThreads: number, elementwiseThreads: number): void;
  info(): NativeBuildInfo;
}

const ABI_VERSION = 1;

interface LoadState {
  addon: NativeAddon | null;
  reason: string | null;
}

let state: LoadState | undefined;
let pathOverride: string | undefined;

function moduleDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Where the loader looks for the addon: the path set with {@link setNativeAddonPath}, else
 * `POAD_NATIVE_ADDON`, else `build/Release/poad_native.node` in this package.
 */
export function nativeAddonPath(): string {
  if (pathOverride !== undefined) return pathOverride;
  const fromEnv = process.env.POAD_NATIVE_ADDON;
  if (fromEnv) return resolve(fromEnv);
  return resolve(moduleDir(), '..', 'build', 'Release', 'poad_native.node');
}

/**
 * Point the loader at another addon file (or `undefined` for the default) and forget the
 * previous load result. Kernels already registered keep the addon they were registered with.
 */
export function setNativeAddonPath(path: string | undefined): void {
  pathOverride = path === undefined ? undefined : resolve(path);
  state = undefined;
}

const ENABLE_HINT =
  'to enable: apt-get install libopenblas-dev build-essential, then npm rebuild @poad/tfjs-native';

function load(): LoadState {
  const path = nativeAddonPath();
  if (!existsSync(path)) {
    return { addon: null, reason: `native addon not built (${path} is missing); ${ENABLE_HINT}` };
  }
  try {
    const req = createRequire(import.meta.url);
    const addon = req(path) as NativeAddon;
    const version = addon.info().abiVersion;
    if (version !== ABI_VERSION) {
      return {
        addon: null,
        reason: `native addon at ${path} is version ${version}, expected ${ABI_VERSION}; run npm rebuild @poad/tfjs-native`,
      };
    }
    return { addon, reason: null };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      addon: null,
      reason: `native addon at ${path} failed to load (${message}); ${ENABLE_HINT}`,
    };
  }
}

/** The loaded addon, or `null` (see {@link nativeUnavailableReason}). Loads once, lazily. */
export function getNativeAddon(): NativeAddon | null {
  if (!state) state = load();
  return state.addon;
}

/** Whether the native addon is built and loads in this process. */
export function isNativeAvailable(): boolean {
  return getNativeAddon() !== null;
}

/** Why the addon is unavailable (with the fix), or `null` when it is available. */
export function nativeUnavailableReason(): string | null {
  if (!state) state = load();
  return state.reason;
}

/** Build facts of the loaded addon (BLAS name, threads, AVX2), or `null` without it. */
export function getNativeInfo(): NativeBuildInfo | null {
  return getNativeAddon()?.info() ?? null;
}

/** Thread counts for {@link setNativeThreads}; omitted fields stay as they are. */
export interface NativeThreadOptions {
  /** Threads the BLAS may use for one matrix product (OpenBLAS only). */
  blas?: number;
  /** Threads for large elementwise kernels. */
  elementwise?: number;
}

/**
 * Change the thread counts at run time. The defaults come from `OPENBLAS_NUM_THREADS` (BLAS)
 * and `POAD_NATIVE_THREADS` (both), else the number of online CPUs. Returns `false` without
 * the addon.
 */
export function setNativeThreads(options: NativeThreadOptions): boolean {
  const addon = getNativeAddon();
  if (!addon) return false;
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new RangeError(`setNativeThreads: ${name} must be a positive integer, got ${value}`);
    }
  }
  addon.setThreads(options.blas ?? 0, options.elementwise ?? 0);
  return true;
}
