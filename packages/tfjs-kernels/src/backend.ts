import { activate, finishBackend } from './backend-common.js';
import { setBatchMatMulRoute } from './batch-matmul.js';
import { BackendUnavailableError } from './errors.js';
import { type FusedOps, setFusedOps } from './fused.js';
import { describeAdapter, type GpuAdapterReport } from './webgpu/adapter.js';
import { dawnGpuSource } from './webgpu/dawn.js';
import { startWebGpu, stopWebGpu, tryHardwareWebGpu } from './webgpu/start.js';

/** Backends {@link initBackend} can select. */
export type BackendChoice = 'auto' | 'tensorflow' | 'wasm' | 'cpu' | 'webgpu';

/** Which backend was chosen and from which package. */
export interface BackendInfo {
  /** TF.js backend name now active (`tensorflow`, `wasm`, `cpu` or `webgpu`). */
  backend: string;
  /** The package that provided it. */
  source: string;
  /** What runs, in words, e.g. "wasm + native kernels (OpenBLAS, 2 threads)". */
  description: string;
  /** Threads of the native kernels (BLAS products and elementwise loops), when they run. */
  threads?: number;
  /** The GPU adapter, on `webgpu`. */
  adapter?: GpuAdapterReport;
}

/** Options of {@link initBackend}. */
export interface BackendOptions {
  /**
   * Threads for `@poad/tfjs-native`'s kernels on wasm (BLAS and elementwise), a positive
   * integer; unset keeps the addon's default (`POAD_NATIVE_THREADS`, else the CPU count). The
   * last bits of a matrix product depend on it, so runs that must repeat exactly fix it.
   * Other backends ignore it.
   */
  threads?: number;
  /**
   * Accept a software WebGPU adapter (lavapipe, SwiftShader) for `webgpu`: it runs the GPU code
   * on the CPU, far slower than wasm, and serves tests. Default: `POAD_WEBGPU_ALLOW_SOFTWARE=1`
   * in the environment. `auto` never picks one.
   */
  allowSoftwareAdapter?: boolean;
}

const TFJS_NATIVE = '@poad/tfjs-native';

type NativeModule = FusedOps & {
  registerNativeKernels(backend?: string): {
    kernels: string[];
    description: string;
    reason: string | null;
  };
  FUSED_KERNEL_NAMES: readonly string[];
  setNativeThreads(options: { blas?: number; elementwise?: number }): boolean;
  getNativeInfo(): { blasThreads: number; elementwiseThreads: number } | null;
};

/**
 * On wasm, override kernels with `@poad/tfjs-native` (BLAS matmuls, native elementwise ops)
 * when that optional package is installed and its addon built; `POAD_NATIVE_KERNELS=0`
 * disables it. Returns a description of what runs and its thread count.
 */
async function useNativeKernels(
  threads: number | undefined,
): Promise<{ description: string; threads: number } | null> {
  try {
    const m = (await import(/* @vite-ignore */ TFJS_NATIVE)) as NativeModule;
    // Before registering, so that the description names the thread count in effect.
    if (threads !== undefined) m.setNativeThreads({ blas: threads, elementwise: threads });
    const res = m.registerNativeKernels('wasm');
    if (res.kernels.length === 0) return null;
    // Fused RMSNorm / SwiGLU / rotary / log-prob ops, when their kernels were registered too.
    const fused = res.kernels.some((k) => m.FUSED_KERNEL_NAMES.includes(k));
    setFusedOps(
      fused
        ? {
            rmsNorm: m.rmsNorm,
            swiGlu: m.swiGlu,
            rotaryEmbedding: m.rotaryEmbedding,
            logProbStats: m.logProbStats,
            ...(typeof m.attention === 'function' ? { attention: m.attention } : {}),
          }
        : null,
    );
    // Measured faster than the depthwise attention route once BLAS handles batched products.
    setBatchMatMulRoute('matmul');
    const info = m.getNativeInfo();
    return {
      description: res.description,
      threads: info ? (info.blasThreads > 0 ? info.blasThreads : info.elementwiseThreads) : 1,
    };
  } catch {
    return null; // not installed: stock wasm kernels
  }
}

// Kept in variables so bundlers leave the optional native packages alone.
const NODE_GPU = '@tensorflow/tfjs-node-gpu';
const NODE_CPU = '@tensorflow/tfjs-node';

async function tryImport(specifier: string): Promise<boolean> {
  try {
    await import(/* @vite-ignore */ specifier);
    return true;
  } catch {
    return false;
  }
}

async function tryNative(packages = [NODE_GPU, NODE_CPU]): Promise<BackendInfo | null> {
  for (const pkg of packages) {
    if ((await tryImport(pkg)) && (await activate('tensorflow')))
      return { backend: 'tensorflow', source: pkg, description: 'tensorflow' };
  }
  return null;
}

function webGpuInfo(adapter: GpuAdapterReport): BackendInfo {
  return {
    backend: 'webgpu',
    source: '@tensorflow/tfjs-backend-webgpu + webgpu (Dawn)',
    description: `webgpu on ${describeAdapter(adapter)}`,
    adapter,
  };
}

async function tryHardwareGpu(): Promise<BackendInfo | null> {
  const adapter = await tryHardwareWebGpu(dawnGpuSource);
  return adapter ? webGpuInfo(adapter) : null;
}

async function tryWasm(): Promise<BackendInfo | null> {
  await import('@tensorflow/tfjs-backend-wasm');
  return (await activate('wasm'))
    ? { backend: 'wasm', source: '@tensorflow/tfjs-backend-wasm', description: 'wasm' }
    : null;
}

async function tryCpu(): Promise<BackendInfo | null> {
  await import('@tensorflow/tfjs-backend-cpu');
  return (await activate('cpu'))
    ? { backend: 'cpu', source: '@tensorflow/tfjs-backend-cpu', description: 'cpu' }
    : null;
}

/**
 * Choose and initialise a TF.js backend. `auto` prefers `@tensorflow/tfjs-node-gpu`, then WebGPU
 * on a hardware adapter (Dawn in Node, the browser's own elsewhere), then `@tensorflow/tfjs-node`
 * (optional installs), then wasm (with `@poad/tfjs-native`'s kernels when built), then cpu; it
 * never picks a software GPU adapter. Nothing happens on import of this package: only this call
 * loads a backend. Also registers a fast `UnsortedSegmentSum` kernel for wasm and cpu (the
 * embedding gradient of full fine-tuning), and the WGSL fused ops on webgpu. `options.threads`
 * sets the native kernels' thread count (see {@link BackendOptions}). On `webgpu`, call
 * {@link releaseBackend} when done: Dawn keeps the process alive while its device is open.
 *
 * @throws BackendUnavailableError naming what is missing (`WebGpuUnavailableError` for webgpu,
 *   whose `missing` says which piece: module, Vulkan loader, driver, software-only adapter).
 */
export async function initBackend(
  choice: BackendChoice = 'auto',
  options: BackendOptions = {},
): Promise<BackendInfo> {
  const { threads } = options;
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) {
    throw new RangeError(`initBackend: threads must be a positive integer, got ${threads}`);
  }
  let info: BackendInfo | null = null;
  switch (choice) {
    case 'auto':
      info =
        (await tryNative([NODE_GPU])) ??
        (await tryHardwareGpu()) ??
        (await tryNative([NODE_CPU])) ??
        (await tryWasm()) ??
        (await tryCpu());
      break;
    case 'tensorflow':
      info = await tryNative();
      if (!info) {
        throw new BackendUnavailableError(
          choice,
          `neither ${NODE_GPU} nor ${NODE_CPU} could be loaded; install one (npm install ${NODE_CPU}) or use "wasm"`,
        );
      }
      break;
    case 'wasm':
      info = await tryWasm();
      break;
    case 'cpu':
      info = await tryCpu();
      break;
    case 'webgpu':
      info = webGpuInfo(
        await startWebGpu(
          options.allowSoftwareAdapter ?? process.env.POAD_WEBGPU_ALLOW_SOFTWARE === '1',
          dawnGpuSource,
        ),
      );
      break;
    default:
      throw new BackendUnavailableError(
        String(choice),
        'unknown backend; use auto, tensorflow, wasm, cpu or webgpu',
      );
  }
  if (!info) throw new BackendUnavailableError(choice, 'initialisation failed');
  await finishBackend(info.backend);
  if (info.backend === 'wasm') {
    const native = await useNativeKernels(threads);
    if (native) return { ...info, source: `${info.source} + ${TFJS_NATIVE}`, ...native };
  }
  return info;
}

/**
 * Release what {@link initBackend} holds outside the JavaScript heap: the WebGPU device (Dawn
 * keeps Node running while it is open). Call it once at the end of a program that used
 * `webgpu`; harmless otherwise. The webgpu backend is unregistered from TF.js (tensors on it are
 * lost); when it was the active backend, `cpu` becomes active.
 */
export async function releaseBackend(): Promise<void> {
  await stopWebGpu();
}
