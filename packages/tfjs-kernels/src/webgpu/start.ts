import * as tf from '@tensorflow/tfjs-core';
import { GpuDeviceError, WebGpuUnavailableError } from '../errors.js';
import { setFusedOps } from '../fused.js';
import {
  findAdapter,
  type GpuAdapterLike,
  type GpuAdapterReport,
  type GpuDeviceLike,
  type GpuLike,
  isSoftwareAdapter,
  openDevice,
  softwareAdapterError,
} from './adapter.js';
import { countDeviceWork } from './counters.js';
import { registerWebGpuKernels, webGpuFusedOps } from './fused-ops.js';
import {
  enableSubgroupDirective,
  probeSubgroupLayout,
  setDeviceSubgroupSize,
} from './subgroups.js';

/** `@tensorflow/tfjs-backend-webgpu`'s module, as far as it is used here. */
export type WebGpuBackendModule = {
  WebGPUBackend: new (device: unknown, info?: unknown) => tf.KernelBackend;
};

/**
 * Where WebGPU comes from in a runtime: `navigator.gpu` (a browser's own, or Dawn's in Node), the
 * error for "no adapter at all", and TF.js's webgpu backend module.
 */
export interface GpuSource {
  gpu(): Promise<GpuLike>;
  noAdapter(): Error;
  backendModule(): Promise<WebGpuBackendModule>;
  /**
   * Whether a hardware adapter is there, asked without opening WebGPU in this process (Dawn in
   * Node asks a child process, so that the messages Dawn prints while it looks for adapters stay
   * out of the terminal); `auto` opens WebGPU only when this says `hardware`, or asks `gpu()`
   * directly when it says `unknown` or is absent.
   */
  probe?(): Promise<'hardware' | 'software' | 'none' | 'unknown'>;
}

/**
 * The backend on `device`, whose reads fail once the device reported an error: WebGPU reports
 * invalid programs, out-of-memory and device loss asynchronously, and the values computed after
 * them are garbage, so a training step must not go on with them.
 */
function guardedBackend(
  mod: WebGpuBackendModule,
  device: GpuDeviceLike,
  info: unknown,
): tf.KernelBackend {
  let failure: string | null = null;
  device.addEventListener('uncapturederror', (event) => {
    failure ??= `${event.error.constructor.name}: ${event.error.message.split('\n')[0]}`;
  });
  void device.lost.then((lost) => {
    if (lost.reason !== 'destroyed')
      failure ??= `the device was lost (${lost.message ?? 'no reason given'})`;
  });
  const backend = new mod.WebGPUBackend(device, info);
  const read = backend.read.bind(backend);
  backend.read = async (dataId: object) => {
    const values = await read(dataId);
    if (failure) {
      throw new GpuDeviceError(
        `the GPU reported an error, so the results computed since are invalid: ${failure}`,
      );
    }
    return values;
  };
  return backend;
}

/** The open device, kept so that {@link stopWebGpu} can release it. */
let active: { device: GpuDeviceLike; report: GpuAdapterReport } | null = null;

/**
 * Make TF.js's webgpu backend run on `adapter`: open a device with the adapter's buffer maxima,
 * register the backend on it, activate it, and install the package's WGSL kernels and fused ops.
 */
async function start(adapter: GpuAdapterLike, source: GpuSource): Promise<GpuAdapterReport> {
  const mod = await source.backendModule();
  const { device, report } = await openDevice(adapter);
  // Subgroups: the directive for the programs that ask for it, and the layout they assume.
  const off = typeof process !== 'undefined' && process.env?.POAD_WEBGPU_SUBGROUPS === '0';
  report.subgroupSize = off ? null : await probeSubgroupLayout(device);
  if (report.subgroupSize !== null) enableSubgroupDirective(device);
  setDeviceSubgroupSize(report.subgroupSize);
  // Count the programs and reads TF.js hands the device (gpuCounters), before it sees the device.
  countDeviceWork(device);
  // The package registers a factory of its own when it sees navigator.gpu; ours uses our device.
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => guardedBackend(mod, device, adapter.info), 0);
  let ok = false;
  try {
    ok = await tf.setBackend('webgpu');
  } catch {
    ok = false;
  }
  if (!ok) {
    tf.removeBackend('webgpu');
    device.destroy();
    throw new WebGpuUnavailableError(
      'device',
      'TF.js could not start its webgpu backend on the device; update the GPU driver',
    );
  }
  void device.lost.then((info) => {
    if (active?.device === device && info.reason !== 'destroyed') {
      console.error(`webgpu: the GPU device was lost (${info.message ?? 'no reason given'})`);
    }
  });
  active = { device, report };
  registerWebGpuKernels();
  setFusedOps(webGpuFusedOps, 'webgpu');
  return report;
}

/**
 * Activate the webgpu backend, opening it on first use. A software adapter is refused unless
 * `allowSoftware`; errors name the missing piece ({@link WebGpuUnavailableError}).
 */
export async function startWebGpu(
  allowSoftware: boolean,
  source: GpuSource,
): Promise<GpuAdapterReport> {
  if (active) {
    if (active.report.software && !allowSoftware) {
      throw new WebGpuUnavailableError(
        'software-adapter',
        'the webgpu backend already runs on a software adapter; allow it (allowSoftwareAdapter) or restart',
      );
    }
    await tf.setBackend('webgpu');
    return active.report;
  }
  const adapter = await findAdapter(await source.gpu(), () => source.noAdapter());
  if (isSoftwareAdapter(adapter) && !allowSoftware) throw softwareAdapterError(adapter);
  return start(adapter, source);
}

/** The webgpu backend on a hardware adapter, or null (nothing activated) when there is none. */
export async function tryHardwareWebGpu(source: GpuSource): Promise<GpuAdapterReport | null> {
  try {
    if (active) return active.report.software ? null : await startWebGpu(false, source);
    const probed = source.probe ? await source.probe() : 'unknown';
    if (probed === 'software' || probed === 'none') return null;
    const adapter = await findAdapter(await source.gpu(), () => source.noAdapter());
    return isSoftwareAdapter(adapter) ? null : await start(adapter, source);
  } catch {
    return null;
  }
}

/**
 * Release the GPU device (Dawn keeps a process alive while its device lives). The webgpu backend
 * is removed from TF.js (when it was the active one, `cpu` takes over, so TF.js stays usable); a
 * later `initBackend('webgpu')` opens a new device.
 */
export async function stopWebGpu(): Promise<void> {
  if (!active) return;
  const { device } = active;
  active = null;
  setDeviceSubgroupSize(null);
  setFusedOps(null, 'webgpu');
  if (tf.getBackend() === 'webgpu') {
    await import('@tensorflow/tfjs-backend-cpu');
    await tf.setBackend('cpu');
  }
  if (tf.findBackend('webgpu')) tf.removeBackend('webgpu');
  device.destroy();
}
