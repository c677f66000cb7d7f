import { afterAll, describe, expect, it } from 'vitest';

/** How a test file's start of the webgpu backend went: what the start returned, or why it failed. */
export type GpuForTests<T> = { ok: true; info: T } | { ok: false; reason: string };

/**
 * Starts the webgpu backend for a test file with `initBackend` (a software adapter such as
 * lavapipe allowed) and releases it with `releaseBackend` after the file's tests. A failed start
 * (no adapter) is returned with its reason, not thrown: the file's GPU tests skip by `ok`, and
 * {@link expectGpuUnderCi} fails under CI.
 */
export async function startWebGpuForTests<T>(
  initBackend: (name: 'webgpu', options: { allowSoftwareAdapter: boolean }) => Promise<T>,
  releaseBackend: () => Promise<unknown>,
): Promise<GpuForTests<T>> {
  const gpu = await initBackend('webgpu', { allowSoftwareAdapter: true }).then(
    (info) => ({ ok: true as const, info }),
    (e: Error) => ({ ok: false as const, reason: e.message }),
  );
  afterAll(async () => {
    await releaseBackend();
  });
  return gpu;
}

/**
 * Fails under CI (which installs a software Vulkan) when the webgpu backend did not start;
 * elsewhere warns that `what` did not run. Returns whether it started.
 */
export function expectGpuUnderCi<T>(
  gpu: GpuForTests<T>,
  what: string,
): gpu is { ok: true; info: T } {
  if (gpu.ok) return true;
  expect(process.env.CI, `no WebGPU adapter under CI: ${gpu.reason}`).toBeFalsy();
  console.warn(`${what} not run: ${gpu.reason}`);
  return false;
}

/** The two calls of a backend package (`@poad/tfjs-kernels`) that start and release webgpu. */
export interface WebGpuBackend<T> {
  initBackend: (name: 'webgpu', options: { allowSoftwareAdapter: boolean }) => Promise<T>;
  releaseBackend: () => Promise<unknown>;
}

/**
 * The start every WebGPU test file shares: the backend started for the file
 * ({@link startWebGpuForTests}) and a test that it started where CI provides a software Vulkan
 * ({@link expectGpuUnderCi}; elsewhere it warns that `what` did not run). `check` adds
 * expectations on what the start returned. Call it at the file's top level; its GPU tests run by
 * the returned `ok`.
 */
export async function webGpuTestFile<T>(
  what: string,
  backend: WebGpuBackend<T>,
  check?: (info: T) => void,
): Promise<GpuForTests<T>> {
  const gpu = await startWebGpuForTests(backend.initBackend, backend.releaseBackend);
  describe('webgpu backend', () => {
    it('starts where CI provides a software Vulkan (no silent skip)', () => {
      if (expectGpuUnderCi(gpu, what)) check?.(gpu.info);
    });
  });
  return gpu;
}
