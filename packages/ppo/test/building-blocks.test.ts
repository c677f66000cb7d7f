import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  clipGradNorm,
  explainedVariance,
  PpoConfigError,
  preset,
  presetKeys,
  SeededRng,
} from '../src/index.js';
import { useCpu } from './backend.js';

beforeAll(useCpu);

describe('presets (§5)', () => {
  it('carry the published values and accept field overrides', () => {
    const p = preset('virtualhome', 'poad');
    expect(p.config).toMatchObject({
      numSteps: 32,
      lr: 1e-6,
      criticLr: 5e-5,
      gamma: 0.95,
      epochs: 5,
      numMinibatches: 2,
      gradAccumulation: 16,
      entropyCoef: 1e-4,
      clip: 0.2,
      valueLossCoef: 0.5,
      targetKl: 0.02,
      maxGradNorm: 0.5,
      algorithm: 'poad',
    });
    expect(p.numEnvs).toBe(4);
    expect(preset('overcooked', 'poad').config).toMatchObject({
      lr: 5e-7,
      criticLr: 1e-5,
      gamma: 0.99,
    });
    expect(preset('datascicoding', 'ntpo').config).toMatchObject({
      numSteps: 8,
      maxNewTokens: 128,
      epochs: 1,
    });
    expect(preset('virtualhome', 'twosome').config).toMatchObject({
      epochs: 1,
      numMinibatches: 4,
      gradAccumulation: 8,
      entropyCoef: 0.01,
    });
    const o = preset('virtualhome', 'poad', { epochs: 1, seed: 9, numEnvs: 2 });
    expect(o.config.epochs).toBe(1);
    expect(o.config.seed).toBe(9);
    expect(o.numEnvs).toBe(2);
    expect(o.config.gradAccumulation).toBe(16);
  });
  it('every published pair has a valid minibatch / accumulation split', () => {
    for (const { env, algorithm } of presetKeys()) {
      const p = preset(env, algorithm);
      const mb = Math.floor((p.config.numSteps * p.numEnvs) / p.config.numMinibatches);
      expect(mb % p.config.gradAccumulation).toBe(0);
    }
  });
  it('reject pairs without published values and bad overrides, naming them', () => {
    expect(() => preset('overcooked', 'archer')).toThrow(PpoConfigError);
    expect(() => preset('datascicoding', 'twosome')).toThrow(/twosome/);
    expect(() => preset('virtualhome', 'poad', { lr: -1 })).toThrow(/config.lr/);
    expect(() => preset('virtualhome', 'poad', { numEnvs: 0 })).toThrow(/numEnvs/);
  });
});

describe('Adam / AdamW', () => {
  it('matches the PyTorch update written out by hand over two steps', async () => {
    const p = tf.variable(tf.tensor1d([1, -2]));
    const opt = new Adam([p], { lr: 0.1, eps: 1e-5, weightDecay: 0.01 });
    const g = [tf.tensor1d([0.5, -1]), tf.tensor1d([0.2, 0.3])];
    const x = [1, -2];
    const m = [0, 0];
    const v = [0, 0];
    for (let t = 1; t <= 2; t++) {
      opt.step([g[t - 1]!]);
      const gv = Array.from(g[t - 1]!.dataSync());
      for (let i = 0; i < 2; i++) {
        x[i]! *= 1 - 0.1 * 0.01;
        m[i] = 0.9 * m[i]! + 0.1 * gv[i]!;
        v[i] = 0.999 * v[i]! + 0.001 * gv[i]! ** 2;
        const denom = Math.sqrt(v[i]!) / Math.sqrt(1 - 0.999 ** t) + 1e-5;
        x[i]! -= (0.1 / (1 - 0.9 ** t)) * (m[i]! / denom);
      }
    }
    const got = Array.from(p.dataSync());
    for (let i = 0; i < 2; i++) expect(got[i]).toBeCloseTo(x[i]!, 5);
    const state = await opt.getState();
    expect(state.step).toBe(2);
    for (let i = 0; i < 2; i++) {
      expect(state.m[0]![i]).toBeCloseTo(m[i]!, 6);
      expect(state.v[0]![i]).toBeCloseTo(v[i]!, 6);
    }
    const q = tf.variable(tf.tensor1d([0, 0]));
    const opt2 = new Adam([q], { lr: 0.1 });
    opt2.setState(state);
    expect(await opt2.getState()).toEqual(state);
    for (const t of [p, q, ...g]) t.dispose();
    opt.dispose();
    opt2.dispose();
  });
});

describe('clipGradNorm', () => {
  it('rescales to the max norm and reports the pre-clip norm (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0.1, max: 5, noNaN: true }),
        async (xs, maxNorm) => {
          const g = tf.tensor1d(xs);
          const { grads, norm } = await clipGradNorm([g, null], maxNorm);
          const expected = Math.sqrt(xs.reduce((s, x) => s + x * x, 0));
          const out = Array.from(grads[0]!.dataSync());
          const outNorm = Math.sqrt(out.reduce((s, x) => s + x * x, 0));
          g.dispose();
          grads[0]!.dispose();
          return (
            Math.abs(norm - expected) < 1e-3 * (1 + expected) &&
            outNorm <= maxNorm * (1 + 1e-4) + 1e-6 &&
            (expected > maxNorm || Math.abs(outNorm - expected) < 1e-3 * (1 + expected)) &&
            grads[1] === null
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('SeededRng', () => {
  it('resumes exactly from a saved state and differs across seeds', () => {
    const a = new SeededRng(42);
    a.float();
    const s = a.getState();
    const seqA = [a.float(), a.int(10), ...a.permutation(5)];
    const b = new SeededRng(7);
    b.setState(s);
    expect([b.float(), b.int(10), ...b.permutation(5)]).toEqual(seqA);
    expect(new SeededRng(1).float()).not.toBe(new SeededRng(2).float());
  });
  it('permutations are permutations and categorical respects zero weights (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer(), (n, seed) => {
        const r = new SeededRng(seed);
        const p = Array.from(r.permutation(n)).sort((x, y) => x - y);
        const c = r.categorical([0, 1, 0, 2, 0]);
        return p.every((x, i) => x === i) && (c === 1 || c === 3);
      }),
      { numRuns: 200 },
    );
  });
});

describe('explainedVariance', () => {
  it('is 1 for a perfect fit, 0 for a constant prediction and NaN without variance', () => {
    expect(explainedVariance([1, 2, 3], [1, 2, 3])).toBeCloseTo(1, 12);
    expect(explainedVariance([1, 2, 3], [5, 5, 5])).toBeCloseTo(0, 12);
    expect(explainedVariance([2, 2], [1, 3])).toBeNaN();
  });
});
