/**
 * The multi-tensor kernels of the webgpu backend: packing tensors into one flat tensor and back
 * by buffer copies (no GPU program), and the AdamW and Lion steps over flat tensors in one
 * program, checked against the same arithmetic in float64 on the host. Runs where Dawn finds an
 * adapter (lavapipe will do); under CI it must find one, so a missing adapter fails.
 */
import { webGpuTestFile } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import {
  gpuCounters,
  gpuCountersSince,
  initBackend,
  MULTI_TENSOR_KERNELS,
  readTensors,
  releaseBackend,
} from '../src/index.js';
import { maxAbsDiff, randomValues } from './helpers.js';

const gpu = await webGpuTestFile('multi-tensor kernel tests', { initBackend, releaseBackend });

const run = (name: string, inputs: object, attrs: object = {}) =>
  tf.engine().runKernel(name, inputs as tf.NamedTensorMap, attrs as tf.NamedAttrMap);

/** GPU programs and reads of `f`, which returns tensors read afterwards. */
async function counted<T>(f: () => T): Promise<{ value: T; programs: number; reads: number }> {
  const before = gpuCounters()!;
  const value = f();
  const d = gpuCountersSince(before, gpuCounters()!);
  return { value, programs: d.programs, reads: d.reads };
}

describe('multi-tensor kernels on webgpu', () => {
  const shapes = [[3, 5], [7], [2, 2, 2], [1], [40, 33]];
  const values = shapes.map((s, i) =>
    randomValues(
      s.reduce((a, b) => a * b, 1),
      10 + i,
    ),
  );

  it.runIf(gpu.ok)('pack and unpack copy values exactly, without a GPU program', async () => {
    const xs = shapes.map((s, i) => tf.tensor(values[i]!, s));
    // Make sure every input lives on the GPU (small tensors may start on the host).
    const ys = xs.map((x) => tf.add(x, 0));
    const live = tf.memory().numTensors;
    const packed = await counted(() => run(MULTI_TENSOR_KERNELS.pack, ys) as tf.Tensor);
    expect(packed.programs).toBe(0);
    expect(packed.value.shape).toEqual([values.reduce((s, v) => s + v.length, 0)]);
    const flat = await packed.value.data();
    let o = 0;
    for (const v of values) {
      expect(Array.from(flat.subarray(o, o + v.length))).toEqual(Array.from(v));
      o += v.length;
    }
    const parts = await counted(
      () => run(MULTI_TENSOR_KERNELS.unpack, { flat: packed.value }, { shapes }) as tf.Tensor[],
    );
    expect(parts.programs).toBe(0);
    for (const [i, t] of parts.value.entries()) {
      expect(t.shape).toEqual(shapes[i]);
      expect(Array.from(await t.data())).toEqual(Array.from(values[i]!));
    }
    // Host inputs (never on the GPU yet) are uploaded first.
    const fromHost = run(MULTI_TENSOR_KERNELS.pack, [
      tf.tensor([1, 2]),
      tf.tensor([3]),
    ]) as tf.Tensor;
    expect(Array.from(await fromHost.data())).toEqual([1, 2, 3]);
    tf.dispose([packed.value, ...parts.value, fromHost]);
    expect(tf.memory().numTensors).toBe(live + 2 /* the two host inputs */);
    tf.dispose([...xs, ...ys]);
  });

  it.runIf(gpu.ok)('readTensors reads many tensors in one host read', async () => {
    const xs = shapes.map((s, i) => tf.add(tf.tensor(values[i]!, s), 0));
    const before = gpuCounters()!;
    const read = await readTensors(xs);
    const d = gpuCountersSince(before, gpuCounters()!);
    expect(d.reads).toBe(1);
    expect(d.readBytes).toBe(4 * values.reduce((s, v) => s + v.length, 0));
    expect(read.map((r) => Array.from(r))).toEqual(values.map((v) => Array.from(v)));
    tf.dispose(xs);
  });

  it.runIf(gpu.ok)('unpack refuses shapes that do not fit the flat tensor', () => {
    const flat = tf.zeros([10]);
    expect(() => run(MULTI_TENSOR_KERNELS.unpack, { flat }, { shapes: [[3, 3]] })).toThrow(
      /9 values, the flat tensor 10/,
    );
    flat.dispose();
  });

  const L = 5000;
  const p = randomValues(L, 1);
  const g = randomValues(L, 2, 3);
  const m = randomValues(L, 3, 0.1);
  const v = Float32Array.from(randomValues(L, 4, 0.1), Math.abs);
  const gNorm = Math.sqrt(g.reduce((s, x) => s + x * x, 0));

  for (const maxNorm of [0, 0.5 * gNorm]) {
    it.runIf(gpu.ok)(`AdamW in one program (${maxNorm ? 'clipped' : 'no clipping'})`, async () => {
      const a = { beta1: 0.9, beta2: 0.999, eps: 1e-5, lr: 1e-2, wd: 0.1, t: 3 };
      const bc1 = 1 - a.beta1 ** a.t;
      const bc2 = Math.sqrt(1 - a.beta2 ** a.t);
      const ins = {
        p: tf.tensor1d(p),
        g: tf.tensor1d(g),
        m: tf.tensor1d(m),
        v: tf.tensor1d(v),
        norm: tf.tensor1d([gNorm]),
      };
      const out = await counted(
        () =>
          run(MULTI_TENSOR_KERNELS.adamW, ins, {
            maxNorm,
            beta1: a.beta1,
            beta2: a.beta2,
            decay: 1 - a.lr * a.wd,
            bc2,
            eps: a.eps,
            lrOverBc1: a.lr / bc1,
          }) as tf.Tensor[],
      );
      expect(out.programs).toBe(1);
      const [p1, m1, v1] = await Promise.all(out.value.map((t) => t.data()));
      const coef = maxNorm > 0 ? Math.min(1, maxNorm / (gNorm + 1e-6)) : 1;
      const ref = { p: new Float64Array(L), m: new Float64Array(L), v: new Float64Array(L) };
      for (let i = 0; i < L; i++) {
        const gi = g[i]! * coef;
        ref.m[i] = a.beta1 * m[i]! + (1 - a.beta1) * gi;
        ref.v[i] = a.beta2 * v[i]! + (1 - a.beta2) * gi * gi;
        const denom = Math.sqrt(ref.v[i]!) / bc2 + a.eps;
        ref.p[i] = p[i]! * (1 - a.lr * a.wd) - (ref.m[i]! / denom) * (a.lr / bc1);
      }
      expect(maxAbsDiff(m1!, ref.m)).toBeLessThan(1e-6);
      expect(maxAbsDiff(v1!, ref.v)).toBeLessThan(1e-6);
      expect(maxAbsDiff(p1!, ref.p)).toBeLessThan(1e-5);
      // The step moved the parameters (by about lr).
      expect(maxAbsDiff(p1!, p)).toBeGreaterThan(1e-3);
      tf.dispose([...Object.values(ins), ...out.value]);
    });
  }

  it.runIf(gpu.ok)('Lion in one program, clipped', async () => {
    const a = { beta1: 0.9, beta2: 0.99, lr: 1e-3, wd: 0.1 };
    const maxNorm = 0.25 * gNorm;
    const ins = {
      p: tf.tensor1d(p),
      g: tf.tensor1d(g),
      m: tf.tensor1d(m),
      norm: tf.tensor1d([gNorm]),
    };
    const out = await counted(
      () =>
        run(MULTI_TENSOR_KERNELS.lion, ins, {
          maxNorm,
          beta1: a.beta1,
          beta2: a.beta2,
          decay: 1 - a.lr * a.wd,
          lr: a.lr,
        }) as tf.Tensor[],
    );
    expect(out.programs).toBe(1);
    const [p1, m1] = await Promise.all(out.value.map((t) => t.data()));
    const coef = Math.min(1, maxNorm / (gNorm + 1e-6));
    const refP = new Float64Array(L);
    const refM = new Float64Array(L);
    for (let i = 0; i < L; i++) {
      const gi = g[i]! * coef;
      const c = a.beta1 * m[i]! + (1 - a.beta1) * gi;
      refP[i] = p[i]! * (1 - a.lr * a.wd) - Math.sign(c) * a.lr;
      refM[i] = a.beta2 * m[i]! + (1 - a.beta2) * gi;
    }
    expect(maxAbsDiff(p1!, refP)).toBeLessThan(1e-6);
    expect(maxAbsDiff(m1!, refM)).toBeLessThan(1e-6);
    tf.dispose([...Object.values(ins), ...out.value]);
  });
  // A norm that is not finite: the step is not taken, every output equals its input exactly
  // (so a caller folds its checks into the norm and the device decides). A finite huge norm is
  // a step (coefficient ~0): only NaN and ±∞ keep the inputs.
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    it.runIf(gpu.ok)(`AdamW and Lion keep their inputs when the norm is ${bad}`, async () => {
      const ins = {
        p: tf.tensor1d(p),
        g: tf.tensor1d(g),
        m: tf.tensor1d(m),
        v: tf.tensor1d(v),
        norm: tf.tensor1d([bad]),
      };
      const attrs = { maxNorm: 1, beta1: 0.9, beta2: 0.99, decay: 0.9, eps: 1e-5 };
      const adam = run(MULTI_TENSOR_KERNELS.adamW, ins, { ...attrs, bc2: 0.5, lrOverBc1: 0.1 });
      const { v: _v, ...lionIns } = ins;
      const lion = run(MULTI_TENSOR_KERNELS.lion, lionIns, { ...attrs, lr: 0.1 });
      const [ap, am, av, lp, lm] = await Promise.all(
        [...(adam as tf.Tensor[]), ...(lion as tf.Tensor[])].map((t) => t.data()),
      );
      for (const [got, want] of [
        [ap, p],
        [am, m],
        [av, v],
        [lp, p],
        [lm, m],
      ] as const)
        expect(maxAbsDiff(got!, want)).toBe(0);
      // The same inputs with a finite norm of 1e30 do step.
      const big = tf.tensor1d([1e30]);
      const stepped = run(
        MULTI_TENSOR_KERNELS.adamW,
        { ...ins, norm: big },
        { ...attrs, bc2: 0.5, lrOverBc1: 0.1 },
      ) as tf.Tensor[];
      expect(maxAbsDiff((await stepped[0]!.data()) as Float32Array, p)).toBeGreaterThan(1e-3);
      tf.dispose([...Object.values(ins), ...(adam as tf.Tensor[]), ...(lion as tf.Tensor[])]);
      tf.dispose([big, ...stepped]);
    });
  }
});
