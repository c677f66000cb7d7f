import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { randomIds, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

describe('tensor memory', () => {
  it('the live tensor count does not grow over 100 scoring + training steps', async () => {
    const model = createCausalLM(tinyConfig({ num_hidden_layers: 1 }), {
      seed: 31,
      lora: true,
      valueHead: { hiddenSizes: [16, 8] },
    });
    const rng = new SeededRng(32);
    const policyOpt = tf.train.adam(1e-3);
    const valueOpt = tf.train.adam(1e-3);
    const step = async (): Promise<void> => {
      const prompts = [randomIds(rng, 5, 61), randomIds(rng, 3, 61)];
      const cands = [[randomIds(rng, 2, 61), randomIds(rng, 3, 61)], [randomIds(rng, 1, 61)]];
      await model.scoreContinuations(prompts, cands);
      const actions = [cands[0]?.[1] as number[], cands[1]?.[0] as number[]];
      const old = await model.scoreTokens(prompts, actions);
      const feats = await model.baseFeatures(prompts, actions);
      const oldLp = old.logProbs.flat();
      policyOpt
        .minimize(
          () => {
            const s = model.tokenStats(prompts, actions, { training: true });
            const ratio = tf.exp(tf.sub(s.logProbs, tf.tensor1d(oldLp)));
            return tf.neg(tf.add(tf.mean(ratio), tf.mul(tf.mean(s.entropies), 0.01))) as tf.Scalar;
          },
          true,
          model.policyVariables(),
        )
        ?.dispose();
      valueOpt
        .minimize(
          () => tf.mean(tf.square(tf.sub(model.values(feats), 1))) as tf.Scalar,
          true,
          model.valueVariables(),
        )
        ?.dispose();
      await model.promptValues(prompts);
    };
    await step();
    await model.generate([1, 2, 3], { maxNewTokens: 3 });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 100; i++) await step();
    await model.generate([1, 2, 3], { maxNewTokens: 3 });
    expect(tf.memory().numTensors).toBe(before);
    policyOpt.dispose();
    valueOpt.dispose();
    model.dispose();
  }, 60_000);
});
