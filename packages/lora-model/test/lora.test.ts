import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { centralDifference, maxAbsDiff, randomIds, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

/** Give every LoRA B a random value so the adapter changes the output. */
function randomizeB(model: ReturnType<typeof createCausalLM>, seed: number, std = 0.3): void {
  const rng = new SeededRng(seed);
  for (const l of model.adapter?.layers ?? []) {
    for (const pair of Object.values(l)) {
      if (!pair) continue;
      const data = rng.fillNormal(new Float32Array(pair.B.size), std);
      pair.B.assign(tf.tensor(data, pair.B.shape));
    }
  }
}

describe('LoRA', () => {
  it('a fresh adapter (B = 0) leaves the logits unchanged and A is U(±1/√in)', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 1, lora: true });
    const ids = [randomIds(new SeededRng(1), 9, 61)];
    const withA = await model.logits(ids);
    const base = await model.logits(ids, { adapter: false });
    expect(maxAbsDiff(withA, base)).toBe(0);
    const a = model.adapter?.layers[0]?.q_proj?.A.dataSync() as Float32Array;
    const bound = 1 / Math.sqrt(32);
    expect(Math.max(...a.map(Math.abs))).toBeLessThanOrEqual(bound);
    expect(Math.max(...a.map(Math.abs))).toBeGreaterThan(bound * 0.8);
    expect(model.adapter?.layers[0]?.k_proj).toBeUndefined();
    model.dispose();
  });

  for (const targets of [
    undefined,
    ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  ] as const) {
    it(`adapted forward equals the merged-weights forward (${targets ? 'all modules' : 'q,v'})`, async () => {
      const model = createCausalLM(tinyConfig({ tie_word_embeddings: true }), {
        seed: 2,
        lora: targets ? { targetModules: [...targets], r: 4, alpha: 8 } : true,
      });
      randomizeB(model, 5);
      const rng = new SeededRng(2);
      const ids = [randomIds(rng, 11, 61), randomIds(rng, 11, 61)];
      const base = await model.logits(ids, { adapter: false });
      const adapted = await model.logits(ids);
      expect(maxAbsDiff(adapted, base)).toBeGreaterThan(1e-2); // the adapter matters
      const before = tf.memory().numTensors;
      model.mergeAdapter();
      expect(model.adapter).toBeNull();
      expect(tf.memory().numTensors).toBeLessThan(before);
      const merged = await model.logits(ids);
      expect(maxAbsDiff(merged, adapted)).toBeLessThan(1e-4);
      model.dispose();
    });
  }

  for (const restricted of [false, true]) {
    it(`analytic LoRA gradients match central finite differences${restricted ? ' (restricted to allowed ids)' : ''}`, () => {
      const model = createCausalLM(tinyConfig({ num_hidden_layers: 1 }), {
        seed: 3,
        lora: { r: 2, alpha: 4 },
      });
      randomizeB(model, 9, 0.2);
      const rng = new SeededRng(4);
      const prompts = [randomIds(rng, 5, 61), randomIds(rng, 3, 61)];
      const actions = [randomIds(rng, 3, 61), randomIds(rng, 4, 61)];
      const allowed = actions.map((a) =>
        a.map((t, k) => (k === 1 ? [t] : [t, ...randomIds(rng, 3, 61)])),
      );
      const loss = (): tf.Scalar =>
        tf.tidy(() => {
          const s = model.tokenStats(prompts, actions, restricted ? { allowed } : {});
          return tf.add(tf.sum(s.logProbs), tf.mul(tf.sum(s.entropies), 0.3)) as tf.Scalar;
        });
      const vars = model.policyVariables();
      const { grads } = tf.variableGrads(loss, vars);
      const eps = 1e-2;
      let checked = 0;
      for (const v of vars) {
        const g = grads[v.name]?.dataSync() as Float32Array;
        for (const idx of [0, Math.floor(v.size / 2), v.size - 1]) {
          const fd = centralDifference(loss, v, idx, eps);
          expect(Math.abs(fd - (g[idx] as number))).toBeLessThan(2e-3 + 2e-2 * Math.abs(fd));
          checked++;
        }
      }
      expect(checked).toBe(vars.length * 3);
      for (const g of Object.values(grads)) g.dispose();
      model.dispose();
    });
  }

  it('LoRA training lowers the loss and only touches A and B', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 5, lora: true, initStd: 0.3 });
    const baseBefore = await model.exportWeights();
    const rng = new SeededRng(6);
    const prompts = [randomIds(rng, 6, 61), randomIds(rng, 6, 61)];
    const actions = [randomIds(rng, 3, 61), randomIds(rng, 3, 61)];
    const opt = tf.train.adam(3e-2);
    const nll = (): tf.Scalar =>
      tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar;
    const first = tf.tidy(() => nll().dataSync()[0] as number);
    for (let i = 0; i < 20; i++) {
      const l = opt.minimize(nll, true, model.policyVariables());
      l?.dispose();
    }
    const last = tf.tidy(() => nll().dataSync()[0] as number);
    expect(last).toBeLessThan(first - 0.5);
    const baseAfter = await model.exportWeights();
    for (const [k, t] of baseBefore)
      expect(maxAbsDiff(t.data, baseAfter.get(k)?.data ?? [])).toBe(0);
    opt.dispose();
    model.dispose();
  });

  it('LoRA dropout acts only in training passes and is seeded', () => {
    const make = () =>
      createCausalLM(tinyConfig(), { seed: 9, initStd: 0.2, lora: { dropout: 0.5 } });
    const a = make();
    const b = make();
    randomizeB(a, 3);
    randomizeB(b, 3);
    const prompts = [[1, 2, 3, 4]];
    const actions = [[5, 6, 7]];
    const run = (m: ReturnType<typeof make>, training: boolean): number[] =>
      tf.tidy(() => Array.from(m.tokenStats(prompts, actions, { training }).logProbs.dataSync()));
    const evalA = run(a, false);
    expect(run(a, false)).toEqual(evalA);
    const trainA = run(a, true);
    expect(maxAbsDiff(trainA, evalA)).toBeGreaterThan(1e-4);
    expect(run(b, true)).toEqual(trainA); // same seed, same masks
    a.dispose();
    b.dispose();
  });

  it('full fine-tuning trains every weight, embedding included', async () => {
    const model = createCausalLM(tinyConfig({ tie_word_embeddings: true }), {
      seed: 7,
      fullFineTune: true,
    });
    const before = await model.exportWeights();
    const rng = new SeededRng(8);
    const prompts = [randomIds(rng, 6, 61)];
    const actions = [randomIds(rng, 4, 61)];
    const opt = tf.train.adam(1e-2);
    const nll = (): tf.Scalar =>
      tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar;
    const first = tf.tidy(() => nll().dataSync()[0] as number);
    for (let i = 0; i < 10; i++) opt.minimize(nll, true, model.policyVariables())?.dispose();
    const last = tf.tidy(() => nll().dataSync()[0] as number);
    expect(last).toBeLessThan(first - 0.5);
    const after = await model.exportWeights();
    for (const [k, t] of before)
      expect(maxAbsDiff(t.data, after.get(k)?.data ?? []), k).toBeGreaterThan(0);
    opt.dispose();
    model.dispose();
  });
});
