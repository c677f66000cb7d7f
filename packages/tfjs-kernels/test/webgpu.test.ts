/**
 * The webgpu backend: its start, the package's WGSL fused ops against TF.js compositions (values
 * and gradients), the bounded AddN and the error guard on reads. Runs where Dawn finds an adapter
 * (a software one such as lavapipe will do); under CI (which installs lavapipe) it must find one,
 * so a missing adapter fails instead of skipping.
 */
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  activeFusedOps,
  GpuDeviceError,
  initBackend,
  logProbStats,
  releaseBackend,
  setFusedOps,
  webGpuFusedOps,
} from '../src/index.js';
import { maxAbsDiff } from './helpers.js';

// A software adapter compiles every shader on first use: seconds per test.
vi.setConfig({ testTimeout: 120_000 });

const gpu = await initBackend('webgpu', { allowSoftwareAdapter: true }).then(
  (info) => ({ ok: true as const, info }),
  (e: Error) => ({ ok: false as const, reason: e.message }),
);

afterAll(async () => {
  await releaseBackend();
});

describe('webgpu backend', () => {
  it('is available where CI provides a software Vulkan (no silent fallback)', () => {
    if (!gpu.ok) {
      // Outside CI a machine without Vulkan skips the tests below; CI must run them.
      expect(process.env.CI, `no WebGPU adapter under CI: ${gpu.reason}`).toBeFalsy();
      console.warn(`webgpu tests not run: ${gpu.reason}`);
      return;
    }
    expect(gpu.info.backend).toBe('webgpu');
    expect(tf.getBackend()).toBe('webgpu');
    expect(gpu.info.adapter?.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    expect(gpu.info.description).toMatch(/^webgpu on /);
  });
});

/** Relative-to-scale max difference (scale at least 1). */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  let scale = 1;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i] as number));
  expect(maxAbsDiff(a, b) / scale, what).toBeLessThan(tol);
}

// TF.js compositions of the fused ops (autodiff through the registered gradients).
function rmsNormRef(x: tf.Tensor2D, w: tf.Tensor1D, eps: number): tf.Tensor2D {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), w);
}

function swiGluRef(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
}

/** Rotate-half rotary embedding: [x1, x2] → [x1·cos − x2·sin, x2·cos + x1·sin] per head. */
function rotaryRef(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, heads: number): tf.Tensor2D {
  const [rows, half] = cos.shape;
  const x3 = tf.reshape(x, [rows, heads, 2 * half]);
  const [x1, x2] = tf.split(x3, 2, 2) as [tf.Tensor3D, tf.Tensor3D];
  const c = tf.reshape(cos, [rows, 1, half]);
  const s = tf.reshape(sin, [rows, 1, half]);
  const y = tf.concat(
    [tf.sub(tf.mul(x1, c), tf.mul(x2, s)), tf.add(tf.mul(x2, c), tf.mul(x1, s))],
    2,
  );
  return tf.reshape(y, [rows, heads * 2 * half]);
}

describe.runIf(gpu.ok)('webgpu fused ops = TF.js compositions', () => {
  /** Values and input gradients of `f` under upstream gradient `dy`. */
  async function valueAndGrads(
    f: (...xs: tf.Tensor[]) => tf.Tensor,
    xs: tf.Tensor[],
    dySeed: number,
  ): Promise<Float32Array[]> {
    const y = tf.tidy(() => f(...xs));
    const dy = tf.tidy(() => tf.randomNormal(y.shape, 0, 1, 'float32', dySeed));
    const grads = tf.grads((...a: tf.Tensor[]) => f(...a))(xs, dy);
    const out = [await y.data(), ...(await Promise.all(grads.map((g) => g.data())))];
    tf.dispose([y, dy, ...grads]);
    return out as Float32Array[];
  }

  /** The WGSL op `fused` against the composition `plain`, on webgpu, with no tensor left over. */
  async function compare(
    fused: (...xs: tf.Tensor[]) => tf.Tensor,
    plain: (...xs: tf.Tensor[]) => tf.Tensor,
    xs: tf.Tensor[],
  ): Promise<void> {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const before = tf.memory().numTensors;
    const a = await valueAndGrads(fused, xs, 3);
    const b = await valueAndGrads(plain, xs, 3);
    expect(a.length).toBe(b.length);
    a.forEach((v, i) => {
      close(v, b[i] as Float32Array, 2e-5, `output ${i}`);
    });
    expect(tf.memory().numTensors).toBe(before);
  }

  const rnd = (shape: number[], seed: number, mean = 0) =>
    tf.randomNormal(shape, mean, 1, 'float32', seed);

  it('RMSNorm, values and gradients (rows and widths that do not fill a workgroup)', async () => {
    for (const [rows, cols] of [
      [5, 37],
      [3, 300],
    ] as const) {
      const x = rnd([rows, cols], 1);
      const w = rnd([cols], 2, 1);
      await compare(
        (a, b) => webGpuFusedOps.rmsNorm(a as tf.Tensor2D, b as tf.Tensor1D, 1e-5),
        (a, b) => rmsNormRef(a as tf.Tensor2D, b as tf.Tensor1D, 1e-5),
        [x, w],
      );
      tf.dispose([x, w]);
    }
  });

  it('SwiGLU, values and gradients', async () => {
    const g = rnd([7, 33], 4);
    const u = rnd([7, 33], 5);
    await compare(
      (a, b) => webGpuFusedOps.swiGlu(a as tf.Tensor2D, b as tf.Tensor2D),
      (a, b) => swiGluRef(a as tf.Tensor2D, b as tf.Tensor2D),
      [g, u],
    );
    tf.dispose([g, u]);
  });

  it('rotary embedding, values and input gradient', async () => {
    const rows = 6;
    const heads = 3;
    const half = 4;
    const x = rnd([rows, heads * 2 * half], 6);
    const angles = tf.tidy(() => tf.mul(rnd([rows, half], 7), 3));
    const cos = tf.cos(angles) as tf.Tensor2D;
    const sin = tf.sin(angles) as tf.Tensor2D;
    await compare(
      (a) => webGpuFusedOps.rotaryEmbedding(a as tf.Tensor2D, cos, sin, heads),
      (a) => rotaryRef(a as tf.Tensor2D, cos, sin, heads),
      [x],
    );
    tf.dispose([x, angles, cos, sin]);
  });

  it('log-prob and entropy of the targets, values and logit gradients', async () => {
    for (const [rows, vocab] of [
      [4, 61],
      [3, 1000],
    ] as const) {
      const z = tf.tidy(() => tf.mul(rnd([rows, vocab], 7), 3));
      const targets = Int32Array.from({ length: rows }, (_, i) => (i * 37) % vocab);
      const f = (a: tf.Tensor) => {
        const s = logProbStats(a as tf.Tensor2D, targets);
        return tf.concat([s.logProbs, tf.mul(s.entropies, 0.5)]);
      };
      // logProbStats itself, with the WGSL op installed and with its own composition.
      await compare(
        f,
        (a) => {
          setFusedOps(null, 'webgpu');
          try {
            return f(a);
          } finally {
            setFusedOps(webGpuFusedOps, 'webgpu');
          }
        },
        [z],
      );
      z.dispose();
    }
  });
});

describe.runIf(gpu.ok)('webgpu backend behaviour', () => {
  it('uses the WGSL fused ops on webgpu', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    expect(activeFusedOps()).toBe(webGpuFusedOps);
  });

  it('adds more tensors at once than a pipeline may bind (AddN in chunks, same sum)', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const xs = Array.from({ length: 40 }, (_, i) => tf.fill([3], i + 0.25));
    const s = tf.addN(xs);
    expect(Array.from(await s.data())).toEqual([790, 790, 790]);
    tf.dispose([s, ...xs]);
  });

  it('a GPU error makes the next read fail (GpuDeviceError) instead of returning garbage', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const x = tf.tensor1d([1, 2, 3]);
    const y = tf.mul(x, 2);
    // An invalid shader module: the device reports a validation error asynchronously, as an
    // event (the backend's own listener, added when the device opened, hears it first).
    const device = (
      tf.backend() as unknown as {
        device: {
          createShaderModule(d: object): void;
          addEventListener(type: 'uncapturederror', f: () => void, o: { once: true }): void;
        };
      }
    ).device;
    let hang: NodeJS.Timeout | undefined;
    const reported = new Promise<void>((resolve, reject) => {
      device.addEventListener('uncapturederror', () => resolve(), { once: true });
      hang = setTimeout(() => reject(new Error('the device reported no error in 60 s')), 60_000);
    });
    device.createShaderModule({ code: 'not a shader' });
    await reported.finally(() => clearTimeout(hang));
    await expect(y.data()).rejects.toBeInstanceOf(GpuDeviceError);
    tf.dispose([x, y]);
    // A new device starts clean.
    await releaseBackend();
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const z = tf.mul(tf.tensor1d([1, 2]), 3);
    expect(Array.from(await z.data())).toEqual([3, 6]);
    z.dispose();
  });
});
