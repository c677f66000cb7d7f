import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

describe('tokenStats in row chunks', () => {
  it('gives the same log-probs, entropies and LoRA gradients whatever the chunk size', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 4, lora: true, initStd: 0.3 });
    // A non-zero B, so that the A gradients are not all zero.
    for (const v of model.policyVariables())
      v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 9));
    const rng = new SeededRng(3);
    const prompts = [randomIds(rng, 4, 61), randomIds(rng, 2, 61), randomIds(rng, 5, 61)];
    const actions = [randomIds(rng, 3, 61), randomIds(rng, 5, 61), randomIds(rng, 1, 61)];
    const allowed = actions.map((a) => a.map((t) => [t, (t + 7) % 61, (t + 8) % 61]));
    const vars = model.policyVariables();
    const run = async (chunkRows: number | undefined, restrict: boolean) => {
      const opts = {
        ...(chunkRows ? { chunkRows } : {}),
        ...(restrict ? { allowed } : {}),
      };
      const s = model.tokenStats(prompts, actions, opts);
      const values = [...(await s.logProbs.data()), ...(await s.entropies.data())];
      tf.dispose([s.logProbs, s.entropies]);
      const { value, grads } = tf.variableGrads(() => {
        const t = model.tokenStats(prompts, actions, opts);
        return tf.add(tf.sum(t.logProbs), tf.mul(0.3, tf.sum(t.entropies))) as tf.Scalar;
      }, vars);
      const g = (await Promise.all(vars.map((v) => grads[v.name]!.data()))).flatMap((x) => [...x]);
      tf.dispose([value, ...Object.values(grads)]);
      return { values, g };
    };
    for (const restrict of [false, true]) {
      const whole = await run(undefined, restrict);
      expect(whole.g.some((x) => Math.abs(x) > 1e-6)).toBe(true);
      for (const rows of [1, 4]) {
        const chunked = await run(rows, restrict);
        expect(maxAbsDiff(chunked.values, whole.values), `${rows} rows`).toBeLessThan(1e-6);
        expect(maxAbsDiff(chunked.g, whole.g), `${rows} rows`).toBeLessThan(1e-5);
      }
    }
    expect(() => model.tokenStats(prompts, actions, { chunkRows: 0 })).toThrow(/chunkRows/);
    model.dispose();
  });
});
