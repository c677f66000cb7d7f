// The optimisers on webgpu with the multi-tensor kernels of @poad/tfjs-kernels (one flat program
// per step) against their per-variable path on the same backend: AdamW (@poad/ppo) and Lion
// (@poad/etpo) over 20 steps with gradient-norm clipping computed on the GPU, the Polyak step of
// ETPO's target critic, the global gradient norm and the checkpoint reads; a resumed fused
// optimiser continues bit for bit; the GPU programs per step do not grow with the number of
// variables. Runs where Dawn finds an adapter (lavapipe will do); under CI it must find one.

import { expectGpuUnderCi, mulberry32, startWebGpuForTests } from '@poad/dev-kit';
import { Lion, polyakUpdate } from '@poad/etpo';
import {
  Adam,
  deviceGate,
  gradNorm,
  MULTI_TENSOR_KERNELS as PPO_KERNELS,
  readVariables,
} from '@poad/ppo';
import {
  gpuCounters,
  gpuCountersSince,
  initBackend,
  MULTI_TENSOR_KERNELS,
  releaseBackend,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

/** A seeded stream in [-1, 1) (mulberry32). */
function stream(seed: number): () => number {
  const r = mulberry32(seed);
  return () => r() * 2 - 1;
}

/** Shapes like a LoRA model's: A and B of 2 layers × 2 projections, and a small value head. */
const SHAPES = [
  [8, 64],
  [64, 8],
  [8, 64],
  [64, 8],
  [8, 64],
  [64, 8],
  [8, 64],
  [64, 8],
  [64, 32],
  [32],
  [32, 1],
  [1],
];

function variables(shapes: number[][], seed: number): tf.Variable[] {
  const r = stream(seed);
  return shapes.map((s) =>
    tf.variable(tf.tensor(Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, r), s)),
  );
}

/** Gradients of step k: seeded, with a scale that makes the clip active on some steps. */
function gradients(shapes: number[][], k: number): tf.Tensor[] {
  const r = stream(1000 + k);
  const scale = k % 3 === 0 ? 5 : 0.2;
  return shapes.map((s) =>
    tf.tensor(
      Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => r() * scale),
      s,
    ),
  );
}

async function values(vars: readonly tf.Variable[]): Promise<Float32Array[]> {
  return (await readVariables(vars)).map((d) => d.data);
}

function maxDiff(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let m = 0;
  a.forEach((x, i) => {
    for (let j = 0; j < x.length; j++) m = Math.max(m, Math.abs(x[j]! - b[i]![j]!));
  });
  return m;
}

type Optimiser = {
  step(
    g: readonly (tf.Tensor | null)[],
    clip?: { norm: number | tf.Scalar; maxNorm: number | null },
  ): void;
  readonly fused: boolean;
  getState(): Promise<unknown>;
  setState(s: never): void;
  dispose(): void;
};

/** `steps` steps of `opt` on its variables with clipping at `maxNorm`, the norm on the device. */
function train(opt: Optimiser, from: number, to: number, maxNorm: number): void {
  for (let k = from; k < to; k++) {
    const g = gradients(SHAPES, k);
    const norm = gradNorm(g);
    opt.step(k === 7 ? [null, ...g.slice(1)] : g, { norm, maxNorm });
    tf.dispose([...g, norm]);
  }
}

const MAKERS = {
  AdamW: (vars: tf.Variable[], fused: boolean) =>
    new Adam(vars, { lr: 1e-2, weightDecay: 0.01, fused }) as unknown as Optimiser,
  Lion: (vars: tf.Variable[], fused: boolean) =>
    new Lion(vars, { lr: 1e-3, weightDecay: 0.01, fused }) as unknown as Optimiser,
};

describe('fused optimisers on webgpu', () => {
  it('run where CI provides a software Vulkan (no silent skip)', () => {
    expectGpuUnderCi(gpu, 'fused optimiser tests');
  });

  it.runIf(gpu.ok)('@poad/ppo and @poad/tfjs-kernels name the same kernels', () => {
    expect(PPO_KERNELS).toEqual(MULTI_TENSOR_KERNELS);
  });

  it.runIf(gpu.ok)(
    'AdamW: a step gated on the device by a non-finite check is not taken; taken back from the count, the run equals one that never asked for it',
    async () => {
      const a = variables(SHAPES, 4);
      const b = variables(SHAPES, 4);
      const gated = new Adam(a, { lr: 1e-2, weightDecay: 0.01 });
      const plain = new Adam(b, { lr: 1e-2, weightDecay: 0.01, fused: false });
      expect(gated.fused).toBe(true);
      train(gated, 0, 5, 1.0);
      train(plain, 0, 5, 1.0);
      const live = tf.memory().numTensors;
      const [before, stateBefore] = [await values(a), await gated.getState()];
      // Step 5 with a finite norm but a NaN (then an infinite) loss among the checks: no change.
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
        const g = gradients(SHAPES, 5);
        const norm = gradNorm(g);
        const checks = [tf.scalar(0.5), tf.scalar(bad), tf.scalar(-2)];
        const gate = deviceGate(norm, checks);
        gated.step(g, { norm: gate, maxNorm: 1.0 });
        tf.dispose([...g, norm, ...checks, gate]);
        expect(maxDiff(await values(a), before)).toBe(0);
        gated.stepSkippedOnDevice();
        expect(await gated.getState()).toEqual(stateBefore);
      }
      expect(tf.memory().numTensors).toBe(live);
      // Finite checks leave the norm exactly as it is: the same step as without them.
      const g = gradients(SHAPES, 5);
      const norm = gradNorm(g);
      const checks = [tf.scalar(3e38), tf.scalar(3e38), tf.scalar(-1)];
      const gate = deviceGate(norm, checks);
      expect((await gate.data())[0]).toBe((await norm.data())[0]);
      tf.dispose([...g, norm, ...checks, gate]);
      train(gated, 5, 12, 1.0);
      train(plain, 5, 12, 1.0);
      expect(gated.stepCount).toBe(12);
      expect(maxDiff(await values(a), await values(b))).toBeLessThan(1e-6);
      expect(() => plain.stepSkippedOnDevice()).toThrow(/only a fused optimiser/);
      gated.dispose();
      plain.dispose();
      tf.dispose([...a, ...b]);
    },
  );

  for (const [name, make] of Object.entries(MAKERS)) {
    it.runIf(gpu.ok)(
      `${name}: fused equals per-variable within 1e-6 over 20 clipped steps`,
      async () => {
        const a = variables(SHAPES, 1);
        const b = variables(SHAPES, 1);
        const fused = make(a, true);
        const plain = make(b, false);
        expect(fused.fused).toBe(true);
        expect(plain.fused).toBe(false);
        const live = tf.memory().numTensors;
        train(fused, 0, 20, 1.0);
        train(plain, 0, 20, 1.0);
        expect(tf.memory().numTensors).toBe(live);
        const [va, vb] = [await values(a), await values(b)];
        expect(maxDiff(va, vb)).toBeLessThan(1e-6);
        // The steps moved the weights, and the states (per variable in both) agree too.
        const start = await values(variables(SHAPES, 1));
        expect(maxDiff(va, start)).toBeGreaterThan(1e-2);
        const [sa, sb] = (await Promise.all([fused.getState(), plain.getState()])) as {
          step: number;
          m: Float32Array[];
        }[];
        expect(sa!.step).toBe(20);
        expect(maxDiff(sa!.m, sb!.m)).toBeLessThan(1e-6);
        fused.dispose();
        plain.dispose();
        tf.dispose([...a, ...b]);
      },
    );

    it.runIf(gpu.ok)(`${name}: a resumed fused optimiser continues bit for bit`, async () => {
      const a = variables(SHAPES, 2);
      const straight = make(a, true);
      train(straight, 0, 20, 1.0);
      const b = variables(SHAPES, 2);
      const first = make(b, true);
      train(first, 0, 10, 1.0);
      const state = await first.getState();
      const saved = await values(b);
      first.dispose();
      tf.dispose(b);
      // A new run: weights and optimiser state restored from plain data.
      const c = variables(SHAPES, 3);
      c.forEach((x, i) => {
        x.assign(tf.tensor(saved[i]!, x.shape));
      });
      const resumed = make(c, true);
      resumed.setState(state as never);
      train(resumed, 10, 20, 1.0);
      const [va, vc] = [await values(a), await values(c)];
      va.forEach((x, i) => {
        expect(Array.from(vc[i]!), `variable ${i}`).toEqual(Array.from(x));
      });
      expect(await resumed.getState()).toEqual(await straight.getState());
      straight.dispose();
      resumed.dispose();
      tf.dispose([...a, ...c]);
    });

    it.runIf(gpu.ok)(
      `${name}: a fused step takes the same GPU programs for 4 or 12 variables`,
      async () => {
        const programs = async (shapes: number[][]) => {
          const vars = variables(shapes, 4);
          const opt = make(vars, true);
          const g = gradients(shapes, 0);
          const norm = gradNorm(g);
          const before = gpuCounters()!;
          opt.step(g, { norm, maxNorm: 1 });
          const d = gpuCountersSince(before, gpuCounters()!);
          tf.dispose([...g, norm]);
          opt.dispose();
          tf.dispose(vars);
          return d;
        };
        const few = await programs(SHAPES.slice(0, 4));
        const many = await programs(SHAPES);
        expect(few.reads).toBe(0);
        expect(many).toEqual(few);
        // One program for the step (packing and unpacking are copies).
        expect(many.programs).toBe(1);
      },
    );
  }

  it.runIf(gpu.ok)(
    'the global gradient norm takes 3 programs for any number of gradients',
    async () => {
      const g = gradients(SHAPES, 5);
      const before = gpuCounters()!;
      const norm = gradNorm(g);
      const d = gpuCountersSince(before, gpuCounters()!);
      expect(d.programs).toBe(3);
      const all = await Promise.all(g.map((x) => x.data()));
      const expected = Math.sqrt(
        all.reduce((s, x) => s + (x as Float32Array).reduce((t, y) => t + y * y, 0), 0),
      );
      expect(Math.abs((await norm.data())[0]! - expected) / expected).toBeLessThan(1e-6);
      tf.dispose([...g, norm]);
    },
  );

  it.runIf(gpu.ok)('Polyak: fused equals per-variable, in 3 programs', async () => {
    const target = variables(SHAPES, 6);
    const onlineVars = variables(SHAPES, 7);
    const single = variables(SHAPES, 6);
    const before = gpuCounters()!;
    polyakUpdate(target, onlineVars, 0.02);
    expect(gpuCountersSince(before, gpuCounters()!).programs).toBe(3);
    // One variable at a time takes the per-variable path.
    single.forEach((t, i) => {
      polyakUpdate([t], [onlineVars[i]!], 0.02);
    });
    const [a, b] = [await values(target), await values(single)];
    a.forEach((x, i) => {
      expect(Array.from(x), `variable ${i}`).toEqual(Array.from(b[i]!));
    });
    tf.dispose([...target, ...onlineVars, ...single]);
  });

  it.runIf(gpu.ok)('a checkpoint reads all variables in one host read', async () => {
    const vars = variables(SHAPES, 8);
    const before = gpuCounters()!;
    const read = await readVariables(vars);
    const d = gpuCountersSince(before, gpuCounters()!);
    expect(d.reads).toBe(1);
    expect(d.readBytes).toBe(4 * vars.reduce((s, v) => s + v.size, 0));
    for (const [i, v] of vars.entries())
      expect(Array.from(read[i]!.data)).toEqual(Array.from(await v.data()));
    tf.dispose(vars);
  });
});
