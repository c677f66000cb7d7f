/**
 * Frozen float32 products chosen per shape: the plan's answers (pure), its JSON check, and on
 * webgpu (lavapipe under CI) that `frozenProduct` runs what the plan says for the product and for
 * its input gradient, with TF.js's values, and that `tuneProducts` measures every form.
 */
import { startWebGpuForTests } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import {
  describeProductPlan,
  frozenProduct,
  initBackend,
  type ProductPlan,
  ProductPlanError,
  type ProductTiming,
  parseProductPlan,
  productProgramsFingerprint,
  releaseBackend,
  setSubgroupUse,
  subgroupSize,
  tuneProducts,
  usesTiled,
} from '../src/index.js';
import { maxAbsDiff, randomValues } from './helpers.js';

vi.setConfig({ testTimeout: 120_000 });

const timing = (
  weight: [number, number],
  transposed: boolean,
  rows: number,
  tiled: boolean,
): ProductTiming => ({
  weight,
  transposed,
  rows,
  tfjsMs: 1,
  tiledMs: tiled ? 0.5 : 2,
  tiled,
});

const plan = (timings: ProductTiming[]): ProductPlan => ({
  version: 1,
  adapter: 'test',
  subgroupSize: null,
  margin: 0.05,
  timings,
});

describe('usesTiled', () => {
  const p = plan([
    timing([64, 96], false, 8, false),
    timing([64, 96], false, 512, true),
    timing([64, 96], true, 8, true),
  ]);

  it('follows the timing of the same form whose rows are nearest by ratio', () => {
    expect(usesTiled(p, 1, [64, 96], false)).toBe(false);
    expect(usesTiled(p, 8, [64, 96], false)).toBe(false);
    // √(8 · 512) = 64 is the boundary: below it 8 rows is nearer, above it 512.
    expect(usesTiled(p, 63, [64, 96], false)).toBe(false);
    expect(usesTiled(p, 65, [64, 96], false)).toBe(true);
    expect(usesTiled(p, 100_000, [64, 96], false)).toBe(true);
    // The transposed form has its own entries.
    expect(usesTiled(p, 100_000, [64, 96], true)).toBe(true);
  });

  it('runs TF.js for a form the plan never timed, and obeys the fixed choices', () => {
    expect(usesTiled(p, 512, [96, 64], false)).toBe(false);
    expect(usesTiled(p, 512, [64, 97], false)).toBe(false);
    expect(usesTiled('tfjs', 512, [64, 96], false)).toBe(false);
    expect(usesTiled('tiled', 1, [3, 5], true)).toBe(true);
    expect(describeProductPlan(p)).toMatch(/tiled program for 2 of 3 timed/);
  });
});

describe('parseProductPlan', () => {
  it('accepts a plan and refuses malformed ones, naming where', () => {
    const p = plan([
      timing([4, 6], false, 8, true),
      { ...timing([4, 6], true, 8, false), tiledMs: null },
    ]);
    expect(parseProductPlan(JSON.parse(JSON.stringify(p)), 'plan.json')).toEqual(p);
    const bad: Array<[unknown, RegExp]> = [
      [null, /not an object/],
      [{ ...p, version: 2 }, /version 2/],
      [{ ...p, margin: 1 }, /margin/],
      [{ ...p, subgroupSize: 0 }, /subgroupSize/],
      [{ ...p, timings: {} }, /timings is not an array/],
      [{ ...p, timings: [{ ...p.timings[0], weight: [4] }] }, /timings\[0\]/],
      [{ ...p, timings: [p.timings[0], { ...p.timings[1], tfjsMs: -1 }] }, /timings\[1\]/],
      [{ ...p, timings: [{ ...p.timings[0], tiled: 'yes' }] }, /timings\[0\]/],
    ];
    for (const [json, message] of bad) {
      const run = () => parseProductPlan(json, 'runs/x/product-plan.json');
      expect(run).toThrow(ProductPlanError);
      expect(run).toThrow(message);
      expect(run).toThrow(/runs\/x\/product-plan\.json: .*delete it to measure a new one/);
    }
  });
});

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

/** The kernels `f` runs, by name, in order. */
async function kernelsOf(f: () => tf.Tensor | tf.Tensor[]): Promise<string[]> {
  const info = await tf.profile(() => f());
  tf.dispose(info.result as tf.Tensor | tf.Tensor[]);
  return info.kernels.map((k) => k.name);
}

describe.runIf(gpu.ok || process.env.CI)('frozenProduct and tuneProducts on webgpu', () => {
  it('is available under CI', () => {
    expect(gpu.ok, gpu.ok ? '' : gpu.reason).toBe(true);
  });

  it('runs the product and its input gradient each as the plan says, with TF.js values', async () => {
    const [m, k, n] = [70, 52, 130];
    const w = tf.tensor2d(randomValues(k * n, 41), [k, n]);
    const wt = tf.tensor2d(randomValues(n * k, 42), [n, k]);
    const x = tf.tensor2d(randomValues(m * k, 43), [m, k]);
    const dy = tf.tensor2d(randomValues(m * n, 44), [m, n]);
    const before = tf.memory().numTensors;
    // The product tiled, its gradient (x · Wᵀ at 70 rows) on TF.js; and the other way round.
    const forwardOnly = plan([timing([k, n], false, 64, true), timing([k, n], true, 64, false)]);
    const gradientOnly = plan([timing([k, n], false, 64, false), timing([k, n], true, 64, true)]);
    const cases: Array<[string, Parameters<typeof frozenProduct>[3], string[]]> = [
      ['tfjs', 'tfjs', ['BatchMatMul', 'BatchMatMul']],
      ['tiled', 'tiled', ['PoadGpuPackedMatMul', 'PoadGpuPackedMatMul']],
      ['forward tiled', forwardOnly, ['PoadGpuPackedMatMul', 'BatchMatMul']],
      ['gradient tiled', gradientOnly, ['BatchMatMul', 'PoadGpuPackedMatMul']],
    ];
    const reference = tf.matMul(x, w);
    const referenceGrad = tf.matMul(dy, w, false, true);
    for (const [name, choice, kernels] of cases) {
      const run = () => {
        const { value, grads } = tf.valueAndGrads((a: tf.Tensor) =>
          frozenProduct(a as tf.Tensor2D, w, false, choice),
        )([x], dy);
        return [value, ...grads];
      };
      const ran = (await kernelsOf(run)).filter((s) => /MatMul/.test(s));
      expect(ran, name).toEqual(kernels);
      const [value, grad] = run();
      expect(maxAbsDiff(await value!.data(), await reference.data()), name).toBeLessThan(2e-5);
      expect(maxAbsDiff(await grad!.data(), await referenceGrad.data()), name).toBeLessThan(2e-5);
      tf.dispose([value!, grad!]);
    }
    // The transposed form: x · Wᵀ with W [n, k], its gradient dy · W.
    const tValue = frozenProduct(x, wt, true, 'tiled');
    const tReference = tf.matMul(x, wt, false, true);
    expect(maxAbsDiff(await tValue.data(), await tReference.data())).toBeLessThan(2e-5);
    tf.dispose([tValue, tReference, reference, referenceGrad]);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([w, wt, x, dy]);
  });

  it('the programs fingerprint is stable and changes with the program the device runs', () => {
    const a = productProgramsFingerprint();
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(productProgramsFingerprint()).toBe(a);
    // lavapipe has subgroups (CI): without them the tiled program's WGSL differs.
    if (subgroupSize() !== null) {
      setSubgroupUse(false);
      const b = productProgramsFingerprint();
      setSubgroupUse(true);
      expect(b).not.toBe(a);
      expect(productProgramsFingerprint()).toBe(a);
    } else expect(process.env.CI).toBeFalsy();
  });

  it('tuneProducts times both forms of each weight shape at each row count, and the plan reads back', async () => {
    const w = tf.tensor2d(randomValues(64 * 96, 51), [64, 96]);
    const same = tf.tensor2d(randomValues(64 * 96, 52), [64, 96]);
    const head = tf.tensor2d(randomValues(200 * 64, 53), [200, 64]);
    const before = tf.memory().numTensors;
    const progress: number[] = [];
    const p = await tuneProducts(
      [
        { w, transposed: false },
        { w: same, transposed: false },
        { w: head, transposed: true },
      ],
      { rows: [4, 70], reps: 1, adapter: 'lavapipe', onProgress: (done) => progress.push(done) },
    );
    expect(tf.memory().numTensors).toBe(before);
    // Two shapes (the second weight shares the first's), two forms each, two row counts.
    expect(p.timings.map((t) => `${t.weight}${t.transposed ? 'ᵀ' : ''}@${t.rows}`)).toEqual([
      '64,96@4',
      '64,96@70',
      '64,96ᵀ@4',
      '64,96ᵀ@70',
      '200,64ᵀ@4',
      '200,64ᵀ@70',
      '200,64@4',
      '200,64@70',
    ]);
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const t of p.timings) {
      expect(t.tfjsMs).toBeGreaterThan(0);
      expect(t.tiledMs).toBeGreaterThan(0);
      expect(t.tiled).toBe((t.tiledMs as number) <= 0.95 * t.tfjsMs);
    }
    expect(p.adapter).toBe('lavapipe');
    expect(parseProductPlan(JSON.parse(JSON.stringify(p)), 'p')).toEqual(p);
    await expect(tuneProducts([{ w, transposed: false }], { rows: [0] })).rejects.toThrow(
      /rows must be positive integers/,
    );
    await expect(
      tuneProducts([{ w: tf.zeros([4, 4], 'int32') as tf.Tensor2D, transposed: false }]),
    ).rejects.toThrow(/float32 matrices/);
    tf.dispose([w, same, head]);
  });
});
