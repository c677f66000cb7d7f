/** What `initBackend('webgpu')` says when it cannot run, and what `auto` does with a software adapter. */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { inCI } from '@poad/dev-kit';
import { describe, expect, it, vi } from 'vitest';
import { WebGpuUnavailableError } from '../src/errors.js';
import { isSoftwareAdapter } from '../src/webgpu/adapter.js';
import { noAdapterError } from '../src/webgpu/dawn.js';

// Each case starts Node processes that load Dawn.
vi.setConfig({ testTimeout: 60_000 });

/** Run `initBackend(choice)` in a fresh Node process; returns its JSON result or error. */
function initInChild(choice: string, env: Record<string, string | undefined> = {}) {
  const script = `
    import { initBackend, releaseBackend } from '@poad/tfjs-kernels/src';
    try {
      const info = await initBackend(${JSON.stringify(choice)});
      console.log(JSON.stringify({ ok: true, backend: info.backend, adapter: info.adapter ?? null }));
      await releaseBackend();
    } catch (e) {
      console.log(JSON.stringify({ ok: false, name: e.name, missing: e.missing ?? null, message: e.message }));
    }`;
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script.replace('@poad/tfjs-kernels/src', SRC)],
    { encoding: 'utf8', env: childEnv(env), stdio: ['ignore', 'pipe', 'ignore'] },
  );
  return JSON.parse(out.trim().split('\n').pop() as string);
}

const SRC = new URL('../src/index.ts', import.meta.url).href;

/** `initBackend(choice)` in a fresh Node process: its result line and everything on its stderr. */
function initInChildWithStderr(choice: string, env: Record<string, string | undefined>) {
  const script = `
    import { initBackend, releaseBackend } from '${SRC}';
    const info = await initBackend(${JSON.stringify(choice)});
    console.log(JSON.stringify({ backend: info.backend }));
    await releaseBackend();`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: childEnv(env),
  });
  expect(r.status, r.stderr).toBe(0);
  return {
    backend: (JSON.parse(r.stdout.trim().split('\n').pop() as string) as { backend: string })
      .backend,
    // TF.js's own advice to install tfjs-node is not Dawn's.
    stderr: r.stderr.replace(/=+\nHi, looks like you are running TensorFlow\.js[\s\S]*?=+\n/, ''),
  };
}

/** Mesa's lavapipe, a software Vulkan driver (CI installs it): its manifest, if there is one. */
function lavapipeManifest(): string | null {
  for (const dir of [
    '/usr/share/vulkan/icd.d',
    '/etc/vulkan/icd.d',
    '/usr/local/share/vulkan/icd.d',
  ]) {
    try {
      const file = readdirSync(dir).find((f) => /^lvp_icd.*\.json$/.test(f));
      if (file) return join(dir, file);
    } catch {
      // no such folder
    }
  }
  return null;
}

/** The test's environment with `env` applied (undefined removes a variable). */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

describe('initBackend("webgpu") errors', () => {
  it('names the missing piece on Linux: loader, then driver, then a driver Dawn refused', () => {
    const noLoader = noAdapterError({ platform: 'linux', loader: null, drivers: [] });
    expect(noLoader).toBeInstanceOf(WebGpuUnavailableError);
    expect(noLoader.missing).toBe('vulkan-loader');
    expect(noLoader.message).toMatch(/libvulkan\.so\.1.*apt-get install libvulkan1/);
    const noDriver = noAdapterError({
      platform: 'linux',
      loader: '/lib/libvulkan.so.1',
      drivers: [],
    });
    expect(noDriver.missing).toBe('driver');
    expect(noDriver.message).toMatch(/no GPU driver.*nvidia_icd\.json.*VK_DRIVER_FILES/);
    const refused = noAdapterError({
      platform: 'linux',
      loader: '/lib/libvulkan.so.1',
      drivers: ['/usr/share/vulkan/icd.d/lvp_icd.json'],
    });
    expect(refused.missing).toBe('driver');
    expect(refused.message).toMatch(/lvp_icd\.json.*accepted none/);
    // NVIDIA's manifest present, GL dispatch libraries absent (a CUDA container image): name them.
    const nvidia = {
      platform: 'linux',
      loader: '/lib/libvulkan.so.1',
      drivers: ['/usr/share/vulkan/icd.d/nvidia_icd.json'],
    };
    const noGl = noAdapterError({
      ...nvidia,
      nvidiaMissingGl: ['libGLdispatch.so.0', 'libGLX.so.0'],
    });
    expect(noGl.missing).toBe('driver');
    expect(noGl.message).toMatch(
      /nvidia_icd\.json.*libGLdispatch\.so\.0, libGLX\.so\.0 missing.*apt-get install libglvnd0/,
    );
    expect(noAdapterError({ ...nvidia, nvidiaMissingGl: [] }).message).toMatch(
      /nvidia_icd\.json.*accepted none/,
    );
    expect(noAdapterError({ platform: 'darwin', loader: null, drivers: [] }).message).toMatch(
      /Metal/,
    );
    expect(noAdapterError({ platform: 'win32', loader: null, drivers: [] }).message).toMatch(
      /D3D12/,
    );
  });

  it('recognises software adapters by the fallback flag, the architecture or the device name', () => {
    const a = (info: Record<string, unknown>, fallback?: boolean) =>
      ({ info, features: new Set(), limits: {}, isFallbackAdapter: fallback }) as never;
    expect(isSoftwareAdapter(a({ architecture: 'software' }))).toBe(true);
    expect(isSoftwareAdapter(a({ description: 'llvmpipe: Mesa 25' }))).toBe(true);
    expect(isSoftwareAdapter(a({ device: 'SwiftShader Device' }))).toBe(true);
    // Chromium's own WebGPU names SwiftShader in the architecture only.
    expect(isSoftwareAdapter(a({ vendor: 'google', architecture: 'swiftshader' }))).toBe(true);
    expect(isSoftwareAdapter(a({ vendor: 'nvidia' }, true))).toBe(true);
    expect(
      isSoftwareAdapter(
        a({ vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H100' }),
      ),
    ).toBe(false);
  });

  it('a real process with no Vulkan driver gets the driver error, before any work', () => {
    const r = initInChild('webgpu', {
      VK_DRIVER_FILES: '/nonexistent/icd.json',
      VK_ICD_FILENAMES: undefined,
    });
    expect(r.ok).toBe(false);
    expect(r.name).toBe('WebGpuUnavailableError');
    expect(['driver', 'vulkan-loader']).toContain(r.missing);
    expect(r.message).toMatch(/^backend "webgpu": /);
  });

  it('a software adapter (lavapipe) is refused unless allowed, and auto never picks it', (ctx) => {
    const lavapipe = lavapipeManifest();
    if (!lavapipe) {
      expect(inCI(), 'no lavapipe (mesa-vulkan-drivers) under CI').toBe(false);
      return ctx.skip();
    }
    // Lavapipe as the only Vulkan driver: a software adapter, on a machine with a GPU too.
    const only = { VK_DRIVER_FILES: lavapipe, VK_ICD_FILENAMES: undefined };
    const allowed = initInChild('webgpu', { ...only, POAD_WEBGPU_ALLOW_SOFTWARE: '1' });
    expect(allowed.ok, `webgpu on lavapipe: ${allowed.message}`).toBe(true);
    expect(allowed.backend).toBe('webgpu');
    expect(allowed.adapter.software).toBe(true);
    const refused = initInChild('webgpu', { ...only, POAD_WEBGPU_ALLOW_SOFTWARE: undefined });
    expect(refused).toMatchObject({ ok: false, missing: 'software-adapter' });
    expect(refused.message).toMatch(/software adapter.*POAD_WEBGPU_ALLOW_SOFTWARE=1/);
    const auto = initInChild('auto', { ...only, POAD_WEBGPU_ALLOW_SOFTWARE: '1' });
    expect(auto.ok).toBe(true);
    expect(auto.backend).not.toBe('webgpu');
  });

  it("auto on a software Vulkan driver alone keeps Dawn's messages out of the terminal", (ctx) => {
    const lavapipe = lavapipeManifest();
    if (!lavapipe) {
      expect(inCI(), 'no lavapipe (mesa-vulkan-drivers) under CI').toBe(false);
      return ctx.skip();
    }
    const only = { VK_DRIVER_FILES: lavapipe, VK_ICD_FILENAMES: undefined };
    // Opened in-process, Dawn prints its warnings while it looks for adapters: the check sees them.
    const opened = initInChildWithStderr('webgpu', { ...only, POAD_WEBGPU_ALLOW_SOFTWARE: '1' });
    expect(opened.backend).toBe('webgpu');
    expect(opened.stderr).toMatch(/maxDynamic\w+PerPipelineLayout artificially reduced/);
    // auto asks a child process, finds only the software adapter and prints nothing of Dawn's.
    const auto = initInChildWithStderr('auto', { ...only, POAD_WEBGPU_ALLOW_SOFTWARE: undefined });
    expect(auto.backend).not.toBe('webgpu');
    expect(auto.stderr).not.toMatch(/artificially reduced|Warning:|Vulkan|Dawn/i);
  });
});
