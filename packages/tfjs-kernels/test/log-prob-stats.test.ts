import { logProbStatsGradientF64 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FusedOps, setFusedOps } from '../src/fused.js';
import { registerGradients } from '../src/gradients.js';
import { logProbStats, targetLogProbs } from '../src/log-prob-stats.js';
import { checkOp, maxAbsDiff, randomValues, TestRng } from './helpers.js';

// logProbStats carries the package's one written-out gradient of the log-probability and entropy
// of the targets (the fused ops of the wasm and webgpu backends replace its forward and backward
// passes, never its math). These tests hold that gradient against references that share no code
// with it: float64 central differences of the definition, and TF.js autodiff through logSoftmax.

beforeAll(async () => {
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  registerGradients();
});

/** tf.grad of Σ wl·logProbs + wh·entropies through `stats`. */
function analyticGradient(
  stats: (z: tf.Tensor2D, t: Int32Array) => { logProbs: tf.Tensor1D; entropies: tf.Tensor1D },
  z: Float32Array,
  rows: number,
  cols: number,
  targets: Int32Array,
  wl: Float32Array,
  wh: Float32Array,
): Float32Array {
  return tf.tidy(() => {
    const f = (x: tf.Tensor) => {
      const s = stats(x as tf.Tensor2D, targets);
      return tf.add(tf.sum(tf.mul(s.logProbs, wl)), tf.sum(tf.mul(s.entropies, wh))) as tf.Scalar;
    };
    return tf
      .grad(f)(tf.tensor2d(z, [rows, cols]))
      .dataSync() as Float32Array;
  });
}

/** The statistics by TF.js autodiff through `tf.logSoftmax` (no written-out gradient). */
function viaLogSoftmax(z: tf.Tensor2D, targets: Int32Array) {
  const logp = tf.logSoftmax(z);
  const onehot = tf.oneHot(tf.tensor1d(targets, 'int32'), z.shape[1]);
  return {
    logProbs: tf.sum(tf.mul(logp, onehot), 1) as tf.Tensor1D,
    entropies: tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)) as tf.Tensor1D,
  };
}

/** Seeded rows × cols logits (scale `scale`), targets and objective weights. */
function problem(rows: number, cols: number, seed: number, scale: number) {
  const rng = new TestRng(seed);
  return {
    z: randomValues(rows * cols, seed + 1, scale),
    targets: Int32Array.from({ length: rows }, () => Math.floor(rng.next() * cols)),
    wl: Float32Array.from({ length: rows }, () => rng.uniform(-1, 1)),
    wh: Float32Array.from({ length: rows }, () => rng.uniform(-1, 1)),
  };
}

/**
 * Problems of 1 to `maxRows` rows of 2 to `maxCols` logits (tf.oneHot needs a depth of 2 or more)
 * at a scale of 0.1 to `maxScale`, with their sizes.
 */
function problemArb(maxRows: number, maxCols: number, maxScale: number) {
  return fc
    .tuple(
      fc.integer({ min: 1, max: maxRows }),
      fc.integer({ min: 2, max: maxCols }),
      fc.double({ min: 0.1, max: maxScale, noNaN: true }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    )
    .map(([rows, cols, scale, seed]) => ({
      rows,
      cols,
      scale,
      ...problem(rows, cols, seed, scale),
    }));
}

describe('logProbStats (fused log-prob + entropy)', () => {
  it('values match logSoftmax, gradients match finite differences', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) => {
        const rng = new TestRng(seed);
        const n = 3;
        const v = 5;
        const targets = Int32Array.from({ length: n }, () => Math.floor(rng.next() * v));
        const wl = Float32Array.from({ length: n }, () => rng.uniform(-1, 1));
        const wh = Float32Array.from({ length: n }, () => rng.uniform(-1, 1));
        const op = (xs: tf.Tensor[]): tf.Tensor => {
          const s = logProbStats(xs[0] as tf.Tensor2D, targets);
          return tf.add(tf.mul(s.logProbs, tf.tensor1d(wl)), tf.mul(s.entropies, tf.tensor1d(wh)));
        };
        checkOp(op, [[n, v]], seed, { eps: 1e-2 });
        tf.tidy(() => {
          const z = tf.randomNormal([n, v], 0, 2, 'float32', seed) as tf.Tensor2D;
          const s = logProbStats(z, targets);
          const ref = tf.logSoftmax(z).arraySync() as number[][];
          const lp = s.logProbs.arraySync();
          const h = s.entropies.arraySync();
          ref.forEach((row, i) => {
            expect(
              Math.abs((lp[i] as number) - (row[targets[i] as number] as number)),
            ).toBeLessThan(1e-5);
            const hr = -row.reduce((a, x) => a + Math.exp(x) * x, 0);
            expect(Math.abs((h[i] as number) - hr)).toBeLessThan(1e-5);
          });
        });
      }),
      { numRuns: 20, seed: 7 },
    );
  });

  it('the written-out gradient equals float64 central differences of the definition', () => {
    fc.assert(
      fc.property(problemArb(4, 40, 8), ({ rows, cols, scale, z, targets, wl, wh }) => {
        const analytic = analyticGradient(logProbStats, z, rows, cols, targets, wl, wh);
        const numeric = logProbStatsGradientF64(z, rows, cols, targets, wl, wh);
        // Float32 forward and backward against a float64 reference: a few ulps of the logits.
        expect(maxAbsDiff(analytic, numeric)).toBeLessThan(2e-5 * (1 + scale));
      }),
      { numRuns: 60, seed: 31 },
    );
  });

  for (const backend of ['cpu', 'wasm'] as const) {
    it(`on ${backend}: values and gradients equal autodiff through logSoftmax`, async () => {
      if (backend === 'wasm') await import('@tensorflow/tfjs-backend-wasm');
      await tf.setBackend(backend);
      try {
        const before = tf.memory().numTensors;
        fc.assert(
          fc.property(problemArb(6, 300, 30), ({ rows, cols, scale, z, targets, wl, wh }) => {
            const [lp, h, lpRef, hRef] = tf.tidy(() => {
              const x = tf.tensor2d(z, [rows, cols]);
              const s = logProbStats(x, targets);
              const r = viaLogSoftmax(x, targets);
              return [s.logProbs, s.entropies, r.logProbs, r.entropies].map((t) => t.dataSync());
            }) as Float32Array[];
            const tol = 1e-5 * (1 + scale);
            expect(maxAbsDiff(lp as Float32Array, lpRef as Float32Array)).toBeLessThan(tol);
            expect(maxAbsDiff(h as Float32Array, hRef as Float32Array)).toBeLessThan(tol);
            const g = analyticGradient(logProbStats, z, rows, cols, targets, wl, wh);
            const gRef = analyticGradient(viaLogSoftmax, z, rows, cols, targets, wl, wh);
            expect(maxAbsDiff(g, gRef)).toBeLessThan(tol);
          }),
          { numRuns: 60, seed: 32 },
        );
        expect(tf.memory().numTensors).toBe(before);
      } finally {
        await tf.setBackend('cpu');
      }
    });
  }
});

describe('logProbStats and targetLogProbs dispatch', () => {
  afterEach(() => {
    setFusedOps(null, 'cpu');
  });

  it('targetLogProbs gives the log-probabilities of logProbStats (to float32 rounding)', () => {
    const { z, targets } = problem(5, 17, 3, 4);
    tf.tidy(() => {
      const x = tf.tensor2d(z, [5, 17]);
      const a = targetLogProbs(x, targets).dataSync();
      expect(maxAbsDiff(a, logProbStats(x, targets).logProbs.dataSync())).toBeLessThan(1e-5);
    });
  });

  it('use the fused op installed for the active backend, and only there', () => {
    const calls: string[] = [];
    const fused = {
      logProbStats(logits: tf.Tensor2D, targets: Int32Array) {
        calls.push(`${logits.shape[0]}x${logits.shape[1]}:${targets.length}`);
        return { logProbs: tf.zeros([targets.length]), entropies: tf.ones([targets.length]) };
      },
    } as unknown as FusedOps;
    setFusedOps(fused, 'wasm');
    tf.tidy(() => {
      logProbStats(tf.zeros([2, 3]), Int32Array.from([0, 1]));
    });
    expect(calls).toEqual([]);
    setFusedOps(null, 'wasm');
    setFusedOps(fused, 'cpu');
    const [lp, h] = tf.tidy(() => {
      const s = logProbStats(tf.zeros([2, 3]), Int32Array.from([0, 1]));
      return [Array.from(s.logProbs.dataSync()), Array.from(s.entropies.dataSync())];
    });
    expect([lp, h]).toEqual([
      [0, 0],
      [1, 1],
    ]);
    tf.tidy(() => targetLogProbs(tf.zeros([2, 3]), Int32Array.from([2, 2])));
    expect(calls).toEqual(['2x3:2', '2x3:2']);
  });

  it('refuses a target count that does not match the rows', () => {
    const z = tf.zeros([3, 4]) as tf.Tensor2D;
    expect(() => logProbStats(z, Int32Array.from([0, 1]))).toThrow(/2 targets for 3 rows/);
    z.dispose();
  });
});
