import { WebGpuUnavailableError } from '../errors.js';

/*
 * Choosing a WebGPU adapter and opening a device with the adapter's largest buffer limits, on any
 * `navigator.gpu`: a browser's own, or Dawn's in Node (dawn.ts creates that one and explains a
 * missing adapter from the machine's Vulkan set-up).
 */

/** The few WebGPU interfaces this file touches (kept structural: no @webgpu/types needed). */
interface GpuAdapterInfo {
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  isFallbackAdapter?: boolean;
}
export interface GpuDeviceLike {
  readonly features: ReadonlySet<string>;
  readonly limits: Record<string, number>;
  readonly lost: Promise<{ reason?: string; message?: string }>;
  addEventListener(
    type: 'uncapturederror',
    listener: (event: { error: { message: string; constructor: { name: string } } }) => void,
  ): void;
  destroy(): void;
}
export interface GpuAdapterLike {
  readonly info: GpuAdapterInfo;
  readonly features: ReadonlySet<string>;
  readonly limits: Record<string, number>;
  readonly isFallbackAdapter?: boolean;
  requestDevice(descriptor?: {
    requiredFeatures?: string[];
    requiredLimits?: Record<string, number>;
  }): Promise<GpuDeviceLike>;
}
export interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}

/** The adapter a WebGPU backend runs on, as `initBackend` reports it. */
export interface GpuAdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A CPU implementation of the API (lavapipe/llvmpipe, SwiftShader, WARP): for tests only. */
  software: boolean;
  /** Optional features the adapter offers (e.g. `shader-f16`, `subgroups`, `timestamp-query`). */
  features: string[];
  /** The features the device was opened with. */
  enabledFeatures: string[];
  /** Buffer limits the device was opened with (the adapter's maxima), in bytes. */
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
  /**
   * The subgroup size the package's programs use on this device: subgroups offered and laid out
   * as contiguous runs of lanes (checked by one program when the device opens). Null where the
   * adapter offers none, lays them out otherwise, or `POAD_WEBGPU_SUBGROUPS=0` turned them off.
   */
  subgroupSize: number | null;
}

/** Limits requested at the adapter's maximum: an embedding of 32k × 4096 floats is 512 MB. */
const MAX_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** Optional features worth having when the adapter offers them. */
const WANTED_FEATURES = ['timestamp-query', 'shader-f16', 'subgroups'] as const;

/** True for a CPU implementation of WebGPU. */
export function isSoftwareAdapter(a: GpuAdapterLike): boolean {
  const info = a.info ?? {};
  if (a.isFallbackAdapter === true || info.isFallbackAdapter === true) return true;
  if (info.architecture === 'software') return true;
  // Chromium names SwiftShader in the architecture only (vendor "google").
  return /llvmpipe|lavapipe|swiftshader|\bwarp\b|basic render/i.test(
    `${info.architecture ?? ''} ${info.device ?? ''} ${info.description ?? ''}`,
  );
}

/** The adapter's description in one line, e.g. "nvidia hopper (NVIDIA H100 80GB HBM3)". */
export function describeAdapter(r: GpuAdapterReport): string {
  const name = [r.vendor, r.architecture].filter((s) => s.length > 0).join(' ') || 'unknown';
  const detail = r.description || r.device;
  return `${name}${detail ? ` (${detail})` : ''}${r.software ? ', software' : ''}`;
}

/**
 * The hardware adapter of `gpu` if there is one, else a software adapter; `noAdapter` makes the
 * error for none at all (it names the missing piece where the runtime can tell).
 */
export async function findAdapter(gpu: GpuLike, noAdapter: () => Error): Promise<GpuAdapterLike> {
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw noAdapter();
  return adapter;
}

/** The error for a software adapter that was not allowed. */
export function softwareAdapterError(a: GpuAdapterLike): WebGpuUnavailableError {
  const d = a.info.description || a.info.device || 'unknown';
  return new WebGpuUnavailableError(
    'software-adapter',
    `only a software adapter was found (${d}): it runs WebGPU on the CPU, far slower than the wasm backend, and serves tests. Install the GPU's Vulkan driver for a hardware adapter, or allow the software one with POAD_WEBGPU_ALLOW_SOFTWARE=1 (initBackend('webgpu', { allowSoftwareAdapter: true }))`,
  );
}

/** Open a device with the adapter's maximum buffer limits and the useful optional features. */
export async function openDevice(
  adapter: GpuAdapterLike,
): Promise<{ device: GpuDeviceLike; report: GpuAdapterReport }> {
  const requiredLimits: Record<string, number> = {};
  for (const k of MAX_LIMITS) {
    const v = adapter.limits[k];
    if (typeof v === 'number') requiredLimits[k] = v;
  }
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  let device: GpuDeviceLike;
  try {
    device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
  } catch (e) {
    throw new WebGpuUnavailableError(
      'device',
      `the adapter refused to open a device (${(e as Error).message}); update the GPU driver`,
    );
  }
  const info = adapter.info ?? {};
  const report: GpuAdapterReport = {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    software: isSoftwareAdapter(adapter),
    features: [...adapter.features].sort(),
    enabledFeatures: [...device.features].sort(),
    limits: {
      maxBufferSize: device.limits.maxBufferSize ?? 0,
      maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize ?? 0,
    },
    subgroupSize: null,
  };
  return { device, report };
}
