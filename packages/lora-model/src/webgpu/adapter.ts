import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WebGpuUnavailableError } from '../errors.js';

/*
 * WebGPU in Node through Dawn (the optional `webgpu` package, which ships dawn.node): create
 * `navigator.gpu`, choose an adapter, open a device with the adapter's largest buffer limits, and,
 * when no adapter is usable, say which piece is missing. Browsers already have `navigator.gpu`;
 * nothing here runs there except adapter selection.
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
interface GpuLike {
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

const DAWN = 'webgpu';

/** True for a CPU implementation of WebGPU. */
export function isSoftwareAdapter(a: GpuAdapterLike): boolean {
  const info = a.info ?? {};
  if (a.isFallbackAdapter === true || info.isFallbackAdapter === true) return true;
  if (info.architecture === 'software') return true;
  return /llvmpipe|lavapipe|swiftshader|\bwarp\b|basic render/i.test(
    `${info.device ?? ''} ${info.description ?? ''}`,
  );
}

/** `navigator.gpu`, created through Dawn in Node when the runtime has none. */
async function navigatorGpu(): Promise<GpuLike> {
  const g = globalThis as { navigator?: { gpu?: GpuLike } };
  if (g.navigator?.gpu) return g.navigator.gpu;
  let dawn: { create(flags: string[]): GpuLike; globals: Record<string, unknown> };
  try {
    dawn = (await import(/* @vite-ignore */ DAWN)) as typeof dawn;
  } catch (e) {
    throw new WebGpuUnavailableError(
      'module',
      `the optional package "webgpu" (Dawn for Node) could not be loaded (${(e as Error).message.split('\n')[0]}); install it with: npm install webgpu@0.6 — it ships dawn.node for Linux x64/arm64, macOS and Windows`,
    );
  }
  // WebGPU's constants (GPUBufferUsage, GPUMapMode, …) as globals, as in a browser.
  for (const [k, v] of Object.entries(dawn.globals)) {
    if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
  }
  const gpu = dawn.create([]);
  // Node 21+ defines a read-only `navigator`; define `gpu` on it, or create one on Node 20.
  if (g.navigator) Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
  else Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  return gpu;
}

const LIB_DIRS = [
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/lib/x86_64-linux-gnu',
  '/lib/aarch64-linux-gnu',
  '/usr/lib64',
  '/usr/lib',
  '/usr/local/lib',
];
const ICD_DIRS = [
  '/usr/share/vulkan/icd.d',
  '/etc/vulkan/icd.d',
  '/usr/local/share/vulkan/icd.d',
  '/usr/local/nvidia/share/vulkan/icd.d',
];

function envPaths(name: string): string[] {
  return (process.env[name] ?? '').split(':').filter((p) => p.length > 0);
}

/** Where the Vulkan loader is, or null when none is found where the dynamic linker looks. */
function vulkanLoader(): string | null {
  for (const dir of [...envPaths('LD_LIBRARY_PATH'), ...LIB_DIRS]) {
    const f = join(dir, 'libvulkan.so.1');
    if (existsSync(f)) return f;
  }
  return null;
}

/** Vulkan driver manifests (ICD files) the loader would read. */
function vulkanDrivers(): string[] {
  const explicit = [...envPaths('VK_DRIVER_FILES'), ...envPaths('VK_ICD_FILENAMES')];
  if (explicit.length > 0) return explicit.filter((f) => existsSync(f));
  const found: string[] = [];
  for (const dir of ICD_DIRS) {
    try {
      for (const f of readdirSync(dir)) if (f.endsWith('.json')) found.push(join(dir, f));
    } catch {
      // not there
    }
  }
  return found;
}

/** What is known about the machine when Dawn returns no adapter. */
export interface NoAdapterFacts {
  platform: string;
  /** Path of libvulkan.so.1, or null when the dynamic linker's directories lack it. */
  loader: string | null;
  /** Vulkan driver manifests found. */
  drivers: string[];
}

/** The error for "Dawn returned no adapter", naming the piece that is most likely missing. */
export function noAdapterError(
  facts: NoAdapterFacts = {
    platform: process.platform,
    loader: vulkanLoader(),
    drivers: vulkanDrivers(),
  },
): WebGpuUnavailableError {
  if (facts.platform === 'darwin') {
    return new WebGpuUnavailableError(
      'driver',
      'Dawn found no Metal adapter; WebGPU needs macOS 11 or later on a Mac with Metal support',
    );
  }
  if (facts.platform === 'win32') {
    return new WebGpuUnavailableError(
      'driver',
      'Dawn found no D3D12 or Vulkan adapter; install or update the GPU driver',
    );
  }
  if (!facts.loader) {
    return new WebGpuUnavailableError(
      'vulkan-loader',
      'no Vulkan loader (libvulkan.so.1) was found, and Dawn needs it on Linux: install it (Debian/Ubuntu: apt-get install libvulkan1; Fedora: dnf install vulkan-loader) together with the GPU driver',
    );
  }
  if (facts.drivers.length === 0) {
    return new WebGpuUnavailableError(
      'driver',
      `the Vulkan loader found no GPU driver (no ICD file in ${ICD_DIRS.join(', ')} or $VK_DRIVER_FILES): install the driver's Vulkan part — NVIDIA: the proprietary driver (it installs nvidia_icd.json; if that file lives elsewhere, set VK_DRIVER_FILES to its path); AMD/Intel: mesa-vulkan-drivers`,
    );
  }
  return new WebGpuUnavailableError(
    'driver',
    `Vulkan drivers are installed (${facts.drivers.join(', ')}) but Dawn accepted none of them: check that \`vulkaninfo --summary\` lists the GPU and update the driver (Debian 12's own Mesa 22 lavapipe is too old for Dawn; bookworm-backports' Mesa 25 works)`,
  );
}

/** The adapter's description in one line, e.g. "nvidia hopper (NVIDIA H100 80GB HBM3)". */
export function describeAdapter(r: GpuAdapterReport): string {
  const name = [r.vendor, r.architecture].filter((s) => s.length > 0).join(' ') || 'unknown';
  const detail = r.description || r.device;
  return `${name}${detail ? ` (${detail})` : ''}${r.software ? ', software' : ''}`;
}

/** The hardware adapter if there is one, else a software adapter, else an error naming the gap. */
export async function findAdapter(): Promise<GpuAdapterLike> {
  const gpu = await navigatorGpu();
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw noAdapterError();
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
  };
  return { device, report };
}
