import * as tf from '@tensorflow/tfjs-core';
import { GpuDeviceError, WebGpuUnavailableError } from '../errors.js';
import { setFusedOps } from '../fused.js';
import {
  findAdapter,
  type GpuAdapterLike,
  type GpuAdapterReport,
  type GpuDeviceLike,
  isSoftwareAdapter,
  openDevice,
  softwareAdapterError,
} from './adapter.js';
import { registerWebGpuKernels, webGpuFusedOps } from './fused-ops.js';

const TFJS_WEBGPU = '@tensorflow/tfjs-backend-webgpu';

type BackendModule = { WebGPUBackend: new (device: unknown, info?: unknown) => tf.KernelBackend };

/**
 * The backend on `device`, whose reads fail once the device reported an error: WebGPU reports
 * invalid programs, out-of-memory and device loss asynchronously, and the values computed after
 * them are garbage, so a training step must not go on with them.
 */
function guardedBackend(
  mod: BackendModule,
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

async function backendModule(): Promise<BackendModule> {
  try {
    return (await import(/* @vite-ignore */ TFJS_WEBGPU)) as BackendModule;
  } catch (e) {
    throw new WebGpuUnavailableError(
      'module',
      `the optional package "${TFJS_WEBGPU}" could not be loaded (${(e as Error).message.split('\n')[0]}); install it with: npm install ${TFJS_WEBGPU}@4.22.0 (the version of @tensorflow/tfjs-core)`,
    );
  }
}

/**
 * Make TF.js's webgpu backend run on `adapter`: open a device with the adapter's buffer maxima,
 * register the backend on it, activate it, and install the package's WGSL kernels and fused ops.
 */
async function start(adapter: GpuAdapterLike): Promise<GpuAdapterReport> {
  const mod = await backendModule();
  const { device, report } = await openDevice(adapter);
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
      process.stderr.write(
        `webgpu: the GPU device was lost (${info.message ?? 'no reason given'})\n`,
      );
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
export async function startWebGpu(allowSoftware: boolean): Promise<GpuAdapterReport> {
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
  const adapter = await findAdapter();
  if (isSoftwareAdapter(adapter) && !allowSoftware) throw softwareAdapterError(adapter);
  return start(adapter);
}

/** The webgpu backend on a hardware adapter, or null (nothing activated) when there is none. */
export async function tryHardwareWebGpu(): Promise<GpuAdapterReport | null> {
  try {
    if (active) return active.report.software ? null : await startWebGpu(false);
    const adapter = await findAdapter();
    return isSoftwareAdapter(adapter) ? null : await start(adapter);
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
  setFusedOps(null, 'webgpu');
  if (tf.getBackend() === 'webgpu') {
    await import('@tensorflow/tfjs-backend-cpu');
    await tf.setBackend('cpu');
  }
  if (tf.findBackend('webgpu')) tf.removeBackend('webgpu');
  device.destroy();
}
