import * as tf from '@tensorflow/tfjs-core';
import { activate, finishBackend } from './backend-common.js';
import { BackendUnavailableError, WebGpuUnavailableError } from './errors.js';
import { describeAdapter, type GpuAdapterReport, type GpuLike } from './webgpu/adapter.js';
import {
  type GpuSource,
  startWebGpu,
  stopWebGpu,
  type WebGpuBackendModule,
} from './webgpu/start.js';

// Backends in a browser (or a Web Worker): the page's own WebGPU, else wasm (multi-threaded when
// the page is cross-origin isolated), else cpu. Node's initBackend (backend.ts) adds tfjs-node,
// Dawn and the native kernels; this file imports none of them.

/** Backends {@link initBackend} can select in a browser. */
export type BrowserBackendChoice = 'auto' | 'webgpu' | 'wasm' | 'cpu';

/** Which backend runs, as {@link initBackend} reports it in a browser. */
export interface BrowserBackendInfo {
  /** TF.js backend name now active (`webgpu`, `wasm` or `cpu`). */
  backend: string;
  /** The package that provided it. */
  source: string;
  /** What runs, in words, e.g. "wasm (SIMD, 4 threads)" or "webgpu on apple metal-3". */
  description: string;
  /** Threads of the wasm backend. */
  threads?: number;
  /**
   * Why wasm runs on one thread, when it does: the page is not cross-origin isolated, the browser
   * has no wasm threads, or too few cores (tfjs-backend-wasm uses at most half the logical cores).
   */
  singleThreadReason?: string;
  /** The GPU adapter, on `webgpu`. */
  adapter?: GpuAdapterReport;
}

/** Options of the browser {@link initBackend}. */
export interface BrowserBackendOptions {
  /**
   * Where the wasm binaries are served: a URL prefix ending in `/`, or a map from each file name
   * (`tfjs-backend-wasm.wasm`, `tfjs-backend-wasm-simd.wasm`,
   * `tfjs-backend-wasm-threaded-simd.wasm`) to its URL. Bundlers give these URLs (Vite:
   * `import u from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url'`).
   */
  wasmPaths?: string | Record<string, string>;
  /**
   * Threads of the wasm backend (default: the browser's `hardwareConcurrency`, at most 8;
   * tfjs-backend-wasm caps it at half the logical cores).
   */
  threads?: number;
  /** Accept a software WebGPU adapter (SwiftShader, WARP, lavapipe) for `webgpu`. */
  allowSoftwareAdapter?: boolean;
}

const browserGpuSource: GpuSource = {
  async gpu() {
    const gpu = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator?.gpu;
    if (!gpu) {
      throw new WebGpuUnavailableError(
        'module',
        'this browser offers no WebGPU (navigator.gpu is undefined): use a recent Chrome, Edge or Safari, serve the page over https or localhost, or choose wasm',
      );
    }
    return gpu;
  },
  noAdapter: () =>
    new WebGpuUnavailableError(
      'driver',
      'the browser returned no WebGPU adapter (the GPU or its driver is blocklisted, or WebGPU is switched off in the browser settings); choose wasm',
    ),
  async backendModule() {
    return (await import('@tensorflow/tfjs-backend-webgpu')) as unknown as WebGpuBackendModule;
  },
};

async function startWasm(options: BrowserBackendOptions): Promise<BrowserBackendInfo | null> {
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  if (options.wasmPaths !== undefined) wasm.setWasmPaths(options.wasmPaths as string);
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator
    ?.hardwareConcurrency;
  const wanted = options.threads ?? Math.min(8, Math.max(1, cores ?? 1));
  if (options.threads !== undefined && (!Number.isInteger(wanted) || wanted < 1)) {
    throw new RangeError(`initBackend: threads must be a positive integer, got ${wanted}`);
  }
  wasm.setThreadsCount(wanted);
  if (!(await activate('wasm'))) return null;
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true;
  const multi = (await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')) === true;
  const threads = multi ? wasm.getThreadsCount() : 1;
  // tfjs-backend-wasm caps its thread pool at half the logical cores (its backend.cc).
  const singleThreadReason =
    threads > 1
      ? undefined
      : !multi
        ? isolated
          ? 'this browser has no wasm threads'
          : 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)'
        : wanted === 1
          ? 'one thread was asked for'
          : `tfjs-backend-wasm uses at most half of the logical cores, and this browser reports ${cores ?? 'an unknown number'}`;
  return {
    backend: 'wasm',
    source: '@tensorflow/tfjs-backend-wasm',
    description: `wasm (${simd ? 'SIMD' : 'no SIMD'}, ${threads} thread${threads === 1 ? '' : 's'})`,
    threads,
    ...(singleThreadReason ? { singleThreadReason } : {}),
  };
}

async function startCpu(): Promise<BrowserBackendInfo | null> {
  await import('@tensorflow/tfjs-backend-cpu');
  return (await activate('cpu'))
    ? {
        backend: 'cpu',
        source: '@tensorflow/tfjs-backend-cpu',
        description: 'cpu (plain JavaScript)',
      }
    : null;
}

async function startGpu(allowSoftware: boolean): Promise<BrowserBackendInfo> {
  const adapter = await startWebGpu(allowSoftware, browserGpuSource);
  return {
    backend: 'webgpu',
    source: '@tensorflow/tfjs-backend-webgpu',
    description: `webgpu on ${describeAdapter(adapter)}`,
    adapter,
  };
}

/**
 * Choose and initialise a TF.js backend in a browser or Web Worker. `auto` prefers WebGPU on a
 * hardware adapter, then wasm, then cpu. Registers this package's gradients and kernels as the
 * Node version does. `options.wasmPaths` tells the wasm backend where its binaries are served.
 *
 * @throws BackendUnavailableError naming what is missing (`WebGpuUnavailableError` for webgpu).
 */
export async function initBackend(
  choice: BrowserBackendChoice = 'auto',
  options: BrowserBackendOptions = {},
): Promise<BrowserBackendInfo> {
  let info: BrowserBackendInfo | null = null;
  switch (choice) {
    case 'auto':
      try {
        info = await startGpu(false);
      } catch {
        info = null;
      }
      info ??= (await startWasm(options)) ?? (await startCpu());
      break;
    case 'webgpu':
      info = await startGpu(options.allowSoftwareAdapter === true);
      break;
    case 'wasm':
      info = await startWasm(options);
      break;
    case 'cpu':
      info = await startCpu();
      break;
    default:
      throw new BackendUnavailableError(
        String(choice),
        'unknown backend; in a browser use auto, webgpu, wasm or cpu',
      );
  }
  if (!info) throw new BackendUnavailableError(choice, 'initialisation failed');
  await finishBackend(info.backend);
  return info;
}

/** Releases the WebGPU device, if one was opened (see the Node version). */
export async function releaseBackend(): Promise<void> {
  await stopWebGpu();
}
