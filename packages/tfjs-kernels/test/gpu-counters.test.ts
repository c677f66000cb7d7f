/**
 * The GPU work counters: programs dispatched, buffers mapped for reading and their bytes, by
 * phase, counted at the device. Runs where Dawn finds an adapter (lavapipe will do: the counts do
 * not depend on the GPU); under CI it must find one, so a missing adapter fails.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  gpuCounters,
  gpuCountersSince,
  gpuPhase,
  initBackend,
  releaseBackend,
  setGpuPhase,
  withGpuPhase,
} from '../src/index.js';

describe('GPU phases', () => {
  it('setGpuPhase returns the previous phase; withGpuPhase restores it, also on a throw', async () => {
    const before = gpuPhase();
    expect(setGpuPhase('a')).toBe(before);
    expect(setGpuPhase('b')).toBe('a');
    await expect(
      withGpuPhase('c', () => {
        expect(gpuPhase()).toBe('c');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(gpuPhase()).toBe('b');
    expect(await withGpuPhase('d', async () => gpuPhase())).toBe('d');
    setGpuPhase(before);
  });

  it('are null until a WebGPU device opens (the cpu backend counts nothing)', () => {
    expect(onCpu).toBeNull();
  });
});

await initBackend('cpu');
tf.dispose(tf.add(tf.ones([64, 64]), 1));
const onCpu = gpuCounters();

const gpu = await webGpuTestFile('GPU counter tests', { initBackend, releaseBackend });

describe('GPU counters on webgpu', () => {
  // 64 × 64 floats: above TF.js's hand-off size, so the ops run on the GPU, not on the CPU copy.
  const N = 64;
  const values = (seed: number) => Float32Array.from({ length: N * N }, (_, i) => (i * seed) % 7);

  it.runIf(gpu.ok)(
    'count each dispatch and each read with its bytes, in the current phase',
    async () => {
      const a = tf.tensor2d(values(3), [N, N]);
      const b = tf.tensor2d(values(5), [N, N]);
      const start = gpuCounters();
      expect(start).not.toBeNull();
      const previous = setGpuPhase('test-ops');
      const sum = tf.add(a, b);
      const prod = tf.mul(sum, b);
      const afterOps = gpuCounters()!;
      setGpuPhase('test-read');
      const data = await prod.data();
      setGpuPhase(previous);
      const end = gpuCounters()!;

      const ops = gpuCountersSince(start!, afterOps);
      expect(ops).toEqual({
        programs: 2,
        reads: 0,
        readBytes: 0,
        phases: { 'test-ops': { programs: 2, reads: 0, readBytes: 0 } },
      });
      const read = gpuCountersSince(afterOps, end);
      expect(read).toEqual({
        programs: 0,
        reads: 1,
        readBytes: N * N * 4,
        phases: { 'test-read': { programs: 0, reads: 1, readBytes: N * N * 4 } },
      });
      // The counted work computed what it should.
      expect(data[N + 1]).toBe(((((N + 1) * 3) % 7) + (((N + 1) * 5) % 7)) * (((N + 1) * 5) % 7));
      // A second read of the same tensor comes from TF.js's host copy: no new read.
      await prod.data();
      expect(gpuCountersSince(end, gpuCounters()!).reads).toBe(0);
      tf.dispose([a, b, sum, prod]);
    },
  );

  it.runIf(gpu.ok)('total the phases', async () => {
    const a = tf.tensor2d(values(2), [N, N]);
    const before = gpuCounters()!;
    const x = await withGpuPhase('p1', async () => {
      const y = tf.neg(a);
      await y.data();
      return y;
    });
    const zt = await withGpuPhase('p2', () => tf.tidy(() => tf.exp(tf.abs(x))));
    const d = gpuCountersSince(before, gpuCounters()!);
    expect(d.phases.p1).toEqual({ programs: 1, reads: 1, readBytes: N * N * 4 });
    expect(d.phases.p2).toEqual({ programs: 2, reads: 0, readBytes: 0 });
    expect(d.programs).toBe(3);
    expect(d.reads).toBe(1);
    tf.dispose([a, x, zt]);
  });
});
