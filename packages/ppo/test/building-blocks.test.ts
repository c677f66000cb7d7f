import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  adamFromConfig,
  clipGradNorm,
  defaultConfig,
  explainedVariance,
  type PpoConfig,
  PpoConfigError,
  pickPpoFields,
  ppoConfigSchema,
  resolveConfig,
  SAMPLER_FIELDS,
  SeededRng,
  TRAINER_FIELDS,
} from '../src/index.js';
import { useCpu } from './backend.js';

beforeAll(useCpu);

describe('the config schema (§5)', () => {
  it("resolveConfig fills mappo's defaults and keeps what is given", () => {
    const c = resolveConfig({ epochs: 3, algorithm: 'ntpo' });
    expect(c).toMatchObject({
      ...defaultConfig,
      epochs: 3,
      algorithm: 'ntpo',
    });
    expect(c).toMatchObject({
      numSteps: 32,
      lr: 1e-6,
      criticLr: 5e-5,
      gamma: 0.95,
      gaeLambda: 0.95,
      clip: 0.2,
      valueLossCoef: 0.5,
      targetKl: 0.02,
      maxGradNorm: 0.5,
      advantageNormalisation: 'masked',
    });
    expect(c.intraGamma).toBeUndefined();
    // Every field of the schema has a default except the "unset means λ/γ/epochs" ones.
    expect(Object.keys(ppoConfigSchema).filter((k) => !(k in defaultConfig))).toEqual([
      'intraGamma',
      'intraLambda',
      'criticEpochs',
    ]);
  });

  it('a resolved config passes through unchanged; others are checked again', () => {
    const c = resolveConfig({ seed: 4 });
    expect(resolveConfig(c)).toBe(c);
    expect(Object.isFrozen(c)).toBe(true);
    expect(resolveConfig({ ...c })).not.toBe(c);
    expect(resolveConfig({ ...c })).toEqual(c);
  });

  it('names the field and the rule a bad value breaks', () => {
    expect(() => resolveConfig({ lr: -1 })).toThrow(PpoConfigError);
    expect(() => resolveConfig({ lr: -1 })).toThrow('config.lr: -1 is below the minimum 0.');
    try {
      resolveConfig({ minibatches: 2 } as Partial<PpoConfig>);
      expect.unreachable();
    } catch (e) {
      expect((e as PpoConfigError).input).toBe('config.minibatches');
    }
    expect(() => resolveConfig({ numMinibatches: 1.5 })).toThrow(
      /config\.numMinibatches: expected an integer/,
    );
    expect(() => resolveConfig({ algorithm: 'ppo' as 'poad' })).toThrow(
      /config\.algorithm: "ppo" is not one of: poad, ntpo, archer, twosome/,
    );
    expect(() => resolveConfig({ advantageNormalisation: 'chunk:0' as 'none' })).toThrow(
      /config\.advantageNormalisation: "chunk:0": expected masked, nan-trick, none or chunk:N/,
    );
    expect(resolveConfig({ advantageNormalisation: 'chunk:4' }).advantageNormalisation).toBe(
      'chunk:4',
    );
    expect(() => resolveConfig({ minibatches: 2 } as Partial<PpoConfig>)).toThrow(
      /config\.minibatches: unknown option\. Valid fields: algorithm, gamma/,
    );
    expect(() => resolveConfig({ algorithm: 'ntpo', critic: 'oracle' })).toThrow(
      /config\.critic: 'oracle' gives the exact values of the BAD backup.*poad or twosome/,
    );
    expect(() => resolveConfig({ critic: 'exact' as 'oracle' })).toThrow(
      /config\.critic: "exact" is not one of: learned, oracle, oracle-star/,
    );
  });
});

describe('pickPpoFields', () => {
  it("takes the fields in the schema's order, whatever the order asked, as they are", () => {
    const picked = pickPpoFields(['seed', 'criticLr', ...TRAINER_FIELDS, 'epochs']);
    expect(Object.keys(picked)).toEqual([
      'gamma',
      ...SAMPLER_FIELDS,
      'epochs',
      'numMinibatches',
      'lr',
      'criticLr',
      'weightDecay',
      'adamEps',
      'adamBeta1',
      'adamBeta2',
      'maxGradNorm',
      'maxNonFiniteSkips',
      'seed',
    ]);
    expect(picked.lr).toBe(ppoConfigSchema.lr);
    expect(picked.numSteps).toBe(ppoConfigSchema.numSteps);
  });

  it('refuses a field PPO does not have, naming it', () => {
    expect(() => pickPpoFields(['lr', 'baselineRate' as 'lr'])).toThrow(
      'pickPpoFields: PPO has no field baselineRate',
    );
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

describe('adamFromConfig', () => {
  it("steps as Adam built by hand from the config's β1, β2, ε and weight decay", async () => {
    const config = resolveConfig({
      adamBeta1: 0.8,
      adamBeta2: 0.99,
      adamEps: 1e-3,
      weightDecay: 0.1,
    });
    const run = async (make: (p: tf.Variable) => Adam) => {
      const p = tf.variable(tf.tensor1d([1, -2, 0.5]));
      const opt = make(p);
      const g = tf.tensor1d([0.5, -1, 0.25]);
      opt.step([g]);
      opt.step([g]);
      const out = { p: Array.from(await p.data()), state: await opt.getState() };
      tf.dispose([p, g]);
      opt.dispose();
      return out;
    };
    const byHand = (weightDecay: number) => (p: tf.Variable) =>
      new Adam([p], { lr: 0.05, beta1: 0.8, beta2: 0.99, eps: 1e-3, weightDecay });
    expect(await run((p) => adamFromConfig([p], config, 0.05))).toEqual(await run(byHand(0.1)));
    // The weight decay given replaces the config's.
    const noDecay = await run((p) => adamFromConfig([p], config, 0.05, 0));
    expect(noDecay).toEqual(await run(byHand(0)));
    expect(noDecay.p).not.toEqual((await run(byHand(0.1))).p);
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

  it('a max norm of 0 (the configs\' "off") leaves the gradients as they are', async () => {
    const g = tf.tensor1d([30, -40]);
    const { grads, norm } = await clipGradNorm([g], 0);
    expect(norm).toBeCloseTo(50, 4);
    expect(Array.from(grads[0]!.dataSync())).toEqual([30, -40]);
    g.dispose();
    grads[0]!.dispose();
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
