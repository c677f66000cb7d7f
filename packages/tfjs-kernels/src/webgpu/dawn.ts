import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebGpuUnavailableError } from '../errors.js';
import { type GpuAdapterLike, type GpuLike, isSoftwareAdapter } from './adapter.js';
import type { GpuSource, WebGpuBackendModule } from './start.js';

/*
 * WebGPU in Node through Dawn (the optional `webgpu` package, which ships dawn.node): create
 * `navigator.gpu`, and, when Dawn returns no adapter, say which piece of the machine's set-up is
 * missing. Browsers have their own `navigator.gpu` and never load this file.
 */

const DAWN = 'webgpu';

/** `navigator.gpu`, created through Dawn in Node when the runtime has none. */
export async function navigatorGpu(): Promise<GpuLike> {
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

/** Where the library `lib` is in `LD_LIBRARY_PATH`, the usual directories or `extraDirs`. */
function findLibrary(lib: string, extraDirs: readonly string[] = []): string | null {
  for (const dir of [...envPaths('LD_LIBRARY_PATH'), ...LIB_DIRS, ...extraDirs]) {
    const f = join(dir, lib);
    if (existsSync(f)) return f;
  }
  return null;
}

/** Where the Vulkan loader is, or null when none is found where the dynamic linker looks. */
function vulkanLoader(): string | null {
  return findLibrary('libvulkan.so.1');
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

/** Whether a driver manifest names NVIDIA's Vulkan driver (`libGLX_nvidia.so.0`). */
function namesNvidiaDriver(manifests: readonly string[]): boolean {
  return manifests.some((f) => {
    try {
      return readFileSync(f, 'utf8').includes('libGLX_nvidia');
    } catch {
      return false;
    }
  });
}

/**
 * The GL vendor-neutral dispatch libraries (libglvnd) NVIDIA's Vulkan driver ran with in a CUDA
 * container that lacked a working driver before they were installed.
 */
const GL_LIBRARIES = [
  'libGLdispatch.so.0',
  'libGLX.so.0',
  'libEGL.so.1',
  'libGL.so.1',
  'libOpenGL.so.0',
  'libGLESv2.so.2',
];

/** Those of {@link GL_LIBRARIES} that are not where the dynamic linker looks. */
function missingGlLibraries(): string[] {
  return GL_LIBRARIES.filter((lib) => findLibrary(lib, ['/usr/local/nvidia/lib64']) === null);
}

/** What is known about the machine when Dawn returns no adapter. */
export interface NoAdapterFacts {
  platform: string;
  /** Path of libvulkan.so.1, or null when the dynamic linker's directories lack it. */
  loader: string | null;
  /** Vulkan driver manifests found. */
  drivers: string[];
  /**
   * When NVIDIA's Vulkan driver is among them: the GL dispatch libraries (libglvnd) that are
   * missing. In a CUDA container image without them the loader reported "Could not get
   * 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0" and Dawn found
   * no adapter; installing them made it work.
   */
  nvidiaMissingGl?: string[];
}

/** This machine's facts for {@link noAdapterError}. */
function machineFacts(): NoAdapterFacts {
  const drivers = vulkanDrivers();
  return {
    platform: process.platform,
    loader: vulkanLoader(),
    drivers,
    nvidiaMissingGl: namesNvidiaDriver(drivers) ? missingGlLibraries() : [],
  };
}

/** The error for "Dawn returned no adapter", naming the piece that is most likely missing. */
export function noAdapterError(facts: NoAdapterFacts = machineFacts()): WebGpuUnavailableError {
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
  if (facts.nvidiaMissingGl && facts.nvidiaMissingGl.length > 0) {
    return new WebGpuUnavailableError(
      'driver',
      `NVIDIA's Vulkan driver is installed (${facts.drivers.join(', ')}) but not the GL dispatch libraries (libglvnd) it runs with — ${facts.nvidiaMissingGl.join(', ')} missing, as in CUDA-only container images: install them (Debian/Ubuntu: apt-get install libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2; Fedora: dnf install libglvnd-glx libglvnd-egl libglvnd-gles libglvnd-opengl), then check that \`vulkaninfo --summary\` lists the GPU`,
    );
  }
  return new WebGpuUnavailableError(
    'driver',
    `Vulkan drivers are installed (${facts.drivers.join(', ')}) but Dawn accepted none of them: check that \`vulkaninfo --summary\` lists the GPU and update the driver (Debian 12's own Mesa 22 lavapipe is too old for Dawn; bookworm-backports' Mesa 25 works)`,
  );
}

/** The URL of the `webgpu` package's entry, or null when it is not installed. */
function dawnModuleUrl(): string | null {
  const tries = [
    () => import.meta.resolve(DAWN),
    () => pathToFileURL(createRequire(import.meta.url).resolve(DAWN)).href,
    () => pathToFileURL(require.resolve(DAWN)).href,
  ];
  for (const t of tries) {
    try {
      const url = t();
      if (typeof url === 'string' && url.length > 0) return url;
    } catch {
      // not this way (ESM or CommonJS build, test runner)
    }
  }
  return null;
}

/** Run in a child process: the adapter Dawn finds, as one JSON line on stdout. */
const PROBE = `
  const { create, globals } = await import(process.argv[1]);
  Object.assign(globalThis, globals);
  const a = await create([]).requestAdapter({ powerPreference: 'high-performance' });
  const info = a ? a.info ?? {} : null;
  process.stdout.write(JSON.stringify(a ? {
    info: { vendor: info.vendor, architecture: info.architecture, device: info.device,
            description: info.description, isFallbackAdapter: info.isFallbackAdapter },
    isFallbackAdapter: a.isFallbackAdapter,
  } : null) + '\n');
  process.exit(0);`;

/**
 * Which adapter Dawn finds, asked in a child process whose output is kept: Dawn prints messages
 * of its own to the terminal while it looks for adapters (on a software Vulkan driver, two
 * warnings about `maxDynamic*BuffersPerPipelineLayout`), which explain nothing when `auto` then
 * does not use WebGPU. `none` when the child finds none or fails; `unknown` when the package
 * cannot be located for a child (e.g. inside a bundle), so that the caller asks in-process.
 */
export function probeDawnAdapter(): Promise<'hardware' | 'software' | 'none' | 'unknown'> {
  const url = dawnModuleUrl();
  if (!url) return Promise.resolve('unknown');
  return new Promise((resolve) => {
    let out = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(process.execPath, ['--input-type=module', '-e', PROBE, url], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch {
      resolve('none');
      return;
    }
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    // Dawn's own messages: read and dropped.
    child.stderr?.resume();
    child.on('error', () => resolve('none'));
    child.on('close', () => {
      try {
        const found = JSON.parse(out.trim().split('\n').pop() ?? 'null') as GpuAdapterLike | null;
        resolve(found === null ? 'none' : isSoftwareAdapter(found) ? 'software' : 'hardware');
      } catch {
        resolve('none');
      }
    });
  });
}

const TFJS_WEBGPU = '@tensorflow/tfjs-backend-webgpu';

/** WebGPU in Node: Dawn's `navigator.gpu`, Vulkan diagnostics, the optional backend package. */
export const dawnGpuSource: GpuSource = {
  gpu: navigatorGpu,
  noAdapter: () => noAdapterError(),
  probe: probeDawnAdapter,
  async backendModule() {
    try {
      return (await import(/* @vite-ignore */ TFJS_WEBGPU)) as WebGpuBackendModule;
    } catch (e) {
      throw new WebGpuUnavailableError(
        'module',
        `the optional package "${TFJS_WEBGPU}" could not be loaded (${(e as Error).message.split('\n')[0]}); install it with: npm install ${TFJS_WEBGPU}@4.22.0 (the version of @tensorflow/tfjs-core)`,
      );
    }
  },
};
