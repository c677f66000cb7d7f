import * as tf from '@tensorflow/tfjs-core';
import { packedWeightsSupported, tiledMatMul } from './packed.js';
import { packedMatMulProgram } from './webgpu/packed.js';
import { subgroupSize } from './webgpu/subgroups.js';

/*
 * Products with a frozen float32 weight on webgpu, `x · W` or `x · Wᵀ`, run either by TF.js's
 * matmul (32 × 32 output tiles) or by the package's tiled program (64 × 64, subgroups where the
 * device has them). Which is faster depends on the GPU and on the shape, so a plan measured on the
 * device at hand ({@link tuneProducts}) says, per weight shape, form and row count, which to run;
 * {@link frozenProduct} follows it, forward and input gradient each by its own entry.
 */

/** How frozen float32 products run: always TF.js, always tiled, or per shape as a plan says. */
export type ProductChoice = 'tfjs' | 'tiled' | ProductPlan;

/** One measured product form: x [rows, k] · W (or · Wᵀ with `transposed`), W of shape `weight`. */
export interface ProductTiming {
  weight: [number, number];
  transposed: boolean;
  rows: number;
  /** Milliseconds per product of TF.js's matmul, and of the tiled program (null: W does not fit one storage binding). */
  tfjsMs: number;
  tiledMs: number | null;
  /** The plan's choice: the tiled program, when it took at most (1 − margin) of TF.js's time. */
  tiled: boolean;
}

/** What {@link tuneProducts} measured, as JSON can hold it (a run keeps it to repeat its choices). */
export interface ProductPlan {
  version: 1;
  /** The device the times were taken on, in words (the caller's; e.g. the backend description). */
  adapter: string;
  /** Subgroup lanes the tiled program used (null: none). */
  subgroupSize: number | null;
  /** The tiled program is chosen only where it saves at least this fraction of TF.js's time. */
  margin: number;
  timings: ProductTiming[];
}

/** A weight whose products to time: W, and whether the model multiplies by it transposed. */
export interface ProductWeight {
  w: tf.Tensor2D;
  transposed: boolean;
}

/** Options of {@link tuneProducts}. */
export interface TuneOptions {
  /** Row counts to time (default 8, 64, 512, 2048); a product of other rows follows the nearest (by ratio). */
  rows?: readonly number[];
  /** Products per timing, queued back to back after two warm-up runs (default 5). */
  reps?: number;
  /** Least fraction of TF.js's time the tiled program must save to be chosen (default 0.05). */
  margin?: number;
  /** Written into the plan: the device, in words. */
  adapter?: string;
  /** Called after each timed form and row count. */
  onProgress?: (done: number, total: number) => void;
}

/** A plan that is not one {@link tuneProducts} writes: `where` names it. */
export class ProductPlanError extends Error {
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(
      `${where}: not a product plan (${detail}); delete it to measure a new one, or choose tfjs or tiled`,
    );
    this.name = 'ProductPlanError';
  }
}

export const DEFAULT_TUNE_ROWS: readonly number[] = [8, 64, 512, 2048];

/** The forms measured for a weight: its own and its input gradient's (the other form). */
function formsOf(w: ProductWeight): Array<{ w: tf.Tensor2D; transposed: boolean }> {
  return [
    { w: w.w, transposed: w.transposed },
    { w: w.w, transposed: !w.transposed },
  ];
}

function sameForm(t: ProductTiming, weight: readonly number[], transposed: boolean): boolean {
  return t.weight[0] === weight[0] && t.weight[1] === weight[1] && t.transposed === transposed;
}

/**
 * Whether `choice` runs x [rows, ·] · W (W of shape `weight`, `transposed` for x · Wᵀ) with the
 * tiled program. A plan answers from the timing of that form whose row count is nearest to `rows`
 * by ratio; a form it never timed runs on TF.js.
 */
export function usesTiled(
  choice: ProductChoice,
  rows: number,
  weight: readonly number[],
  transposed: boolean,
): boolean {
  if (choice === 'tfjs') return false;
  if (choice === 'tiled') return true;
  let best: ProductTiming | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const t of choice.timings) {
    if (!sameForm(t, weight, transposed)) continue;
    const d = Math.abs(Math.log(Math.max(rows, 1) / t.rows));
    if (d < bestDistance) {
      best = t;
      bestDistance = d;
    }
  }
  return best?.tiled ?? false;
}

function product(x: tf.Tensor2D, w: tf.Tensor2D, transposed: boolean, tiled: boolean): tf.Tensor2D {
  return tiled ? tiledMatMul(x, w, transposed) : tf.matMul(x, w, false, transposed);
}

/**
 * `x · W` (`transposed`: `x · Wᵀ`) for a frozen float32 W: differentiable in x only. The product
 * and its input gradient (`dy · Wᵀ`, resp. `dy · W`) each run as `choice` says for their own form
 * and rows. Off webgpu every product is TF.js's (the tiled program needs webgpu).
 */
export function frozenProduct(
  x: tf.Tensor2D,
  w: tf.Tensor2D,
  transposed: boolean,
  choice: ProductChoice,
): tf.Tensor2D {
  const gpu = packedWeightsSupported();
  const tiledFor = (rows: number, t: boolean) => gpu && usesTiled(choice, rows, w.shape, t);
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    save([w]);
    const rows = xi.shape[0];
    return {
      value: product(xi, w, transposed, tiledFor(rows, transposed)),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        product(
          dy as tf.Tensor2D,
          saved[0] as tf.Tensor2D,
          !transposed,
          tiledFor(rows, !transposed),
        ),
    };
  });
  return f(x) as tf.Tensor2D;
}

/**
 * Mean milliseconds of `run` over `reps` products queued back to back, after two warm-up runs;
 * ended by reading one value, so the time is the device's, queueing included.
 */
export async function timeProduct(run: () => tf.Tensor, reps: number): Promise<number> {
  const settle = async (y: tf.Tensor) => {
    const probe = tf.slice(y, [0, 0], [1, 1]);
    await probe.data();
    tf.dispose([y, probe]);
  };
  for (let i = 0; i < 2; i++) await settle(run());
  const t0 = performance.now();
  let last: tf.Tensor | null = null;
  for (let i = 0; i < reps; i++) {
    last?.dispose();
    last = run();
  }
  await settle(last as tf.Tensor);
  return (performance.now() - t0) / reps;
}

/** The largest storage binding of the active webgpu device, in bytes (2 GiB − 4 if unknown). */
function bindingLimit(): number {
  const device = (
    tf.backend() as { device?: { limits?: { maxStorageBufferBindingSize?: number } } }
  ).device;
  return device?.limits?.maxStorageBufferBindingSize ?? 2 ** 31 - 4;
}

/**
 * Times TF.js's matmul against the tiled program on the active webgpu device for every form of
 * `weights` (each weight's own product and its input gradient's), at each of `rows` rows, with
 * the weights themselves and random inputs, and returns the plan {@link frozenProduct} follows.
 * Each pair is timed twice in alternating order and the faster time of each kept. Weights of one
 * shape are timed once. Leaves no tensor behind.
 */
export async function tuneProducts(
  weights: readonly ProductWeight[],
  opts: TuneOptions = {},
): Promise<ProductPlan> {
  if (!packedWeightsSupported()) {
    throw new RangeError(
      `tuneProducts: times products on the webgpu backend only (active: ${tf.getBackend()})`,
    );
  }
  const rows = [...(opts.rows ?? DEFAULT_TUNE_ROWS)];
  const reps = opts.reps ?? 5;
  const margin = opts.margin ?? 0.05;
  if (rows.length === 0 || rows.some((r) => !Number.isInteger(r) || r < 1))
    throw new RangeError(`tuneProducts: rows must be positive integers, got [${rows}]`);
  if (!Number.isInteger(reps) || reps < 1)
    throw new RangeError(`tuneProducts: reps must be a positive integer, got ${reps}`);
  if (!(margin >= 0 && margin < 1))
    throw new RangeError(`tuneProducts: margin must be in [0, 1), got ${margin}`);
  const forms: Array<{ w: tf.Tensor2D; transposed: boolean }> = [];
  for (const w of weights) {
    if (w.w.dtype !== 'float32' || w.w.rank !== 2)
      throw new RangeError(
        `tuneProducts: weights are float32 matrices, got ${w.w.dtype} [${w.w.shape}]`,
      );
    for (const f of formsOf(w))
      if (!forms.some((g) => g.transposed === f.transposed && sameShape(g.w, f.w))) forms.push(f);
  }
  const limit = bindingLimit();
  const timings: ProductTiming[] = [];
  const total = forms.length * rows.length;
  for (const { w, transposed } of forms) {
    const [a, b] = w.shape;
    const k = transposed ? b : a;
    const n = transposed ? a : b;
    const fits = a * b * 4 <= limit;
    for (const m of rows) {
      const x = tf.randomNormal([m, k], 0, 1, 'float32', timings.length + 1) as tf.Tensor2D;
      const outFits = m * n * 4 <= limit;
      const tfjs = () => tf.matMul(x, w, false, transposed);
      const tiled = () => tiledMatMul(x, w, transposed);
      let tfjsMs = Number.POSITIVE_INFINITY;
      let tiledMs: number | null = fits && outFits ? Number.POSITIVE_INFINITY : null;
      const timeTfjs = async () => {
        tfjsMs = Math.min(tfjsMs, await timeProduct(tfjs, reps));
      };
      const timeTiled = async () => {
        if (tiledMs !== null) tiledMs = Math.min(tiledMs, await timeProduct(tiled, reps));
      };
      try {
        // A B B A: each program runs first once, and each keeps its faster time.
        await timeTfjs();
        await timeTiled();
        await timeTiled();
        await timeTfjs();
      } finally {
        x.dispose();
      }
      timings.push({
        weight: [a, b],
        transposed,
        rows: m,
        tfjsMs,
        tiledMs,
        tiled: tiledMs !== null && tiledMs <= (1 - margin) * tfjsMs,
      });
      opts.onProgress?.(timings.length, total);
    }
  }
  return {
    version: 1,
    adapter: opts.adapter ?? '',
    subgroupSize: subgroupSize(),
    margin,
    timings,
  };
}

function sameShape(a: tf.Tensor, b: tf.Tensor): boolean {
  return a.shape[0] === b.shape[0] && a.shape[1] === b.shape[1];
}

const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1;
const isTime = (v: unknown): v is number => typeof v === 'number' && v >= 0;

/** A plan read back from JSON, checked field by field; a {@link ProductPlanError} names `where`. */
export function parseProductPlan(json: unknown, where: string): ProductPlan {
  const fail = (detail: string): never => {
    throw new ProductPlanError(where, detail);
  };
  if (typeof json !== 'object' || json === null) return fail('not an object');
  const p = json as Record<string, unknown>;
  if (p.version !== 1) fail(`version ${JSON.stringify(p.version)}, expected 1`);
  if (typeof p.adapter !== 'string') fail('adapter is not a string');
  if (p.subgroupSize !== null && !isCount(p.subgroupSize))
    fail('subgroupSize is not a count or null');
  if (typeof p.margin !== 'number' || !(p.margin >= 0 && p.margin < 1))
    fail('margin is not in [0, 1)');
  if (!Array.isArray(p.timings)) return fail('timings is not an array');
  p.timings.forEach((t: unknown, i: number) => {
    const e = t as Record<string, unknown> | null;
    const ok =
      typeof e === 'object' &&
      e !== null &&
      Array.isArray(e.weight) &&
      e.weight.length === 2 &&
      e.weight.every(isCount) &&
      typeof e.transposed === 'boolean' &&
      isCount(e.rows) &&
      isTime(e.tfjsMs) &&
      (e.tiledMs === null || isTime(e.tiledMs)) &&
      typeof e.tiled === 'boolean';
    if (!ok)
      fail(`timings[${i}] is not {weight: [rows, cols], transposed, rows, tfjsMs, tiledMs, tiled}`);
  });
  return json as ProductPlan;
}

/**
 * What a plan's timings depend on besides the GPU and the shapes, as a short hex string: TF.js's
 * version (its matmul) and the WGSL of the tiled program in both forms as this device would run
 * it (its subgroup size included). A cache of plans keyed by it never serves a plan measured on
 * other programs.
 */
export function productProgramsFingerprint(): string {
  const sg = subgroupSize();
  const text = [
    tf.version_core,
    packedMatMulProgram(64, 64, 'float32', false, sg).getUserCode(),
    packedMatMulProgram(64, 64, 'float32', true, sg).getUserCode(),
  ].join('\n');
  // FNV-1a, 32 bits, twice (two offsets) for 64 bits: a cache key, not a security measure.
  const fnv = (offset: number): string => {
    let h = offset >>> 0;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, '0');
  };
  return fnv(0x811c9dc5) + fnv(0x01234567);
}

/** In words: how many of the plan's timed forms run tiled, e.g. "tiled for 5 of 12 product shapes". */
export function describeProductPlan(choice: ProductChoice): string {
  if (choice === 'tfjs') return "TF.js's matmul for every frozen float32 product";
  if (choice === 'tiled') return 'the tiled program for every frozen float32 product';
  const n = choice.timings.filter((t) => t.tiled).length;
  return `the tiled program for ${n} of ${choice.timings.length} timed product shapes, TF.js's matmul for the rest`;
}
