// TWOSOME on the label tree (`tokenSpace: 'labels'`): it acts with the product of the tokens'
// probabilities renormalised over the labels' continuations, as POAD does with that token space,
// and its update recomputes that product's label log-prob.
import type { TextStep } from '@poad/envs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  computeAdvantages,
  type PpoConfig,
  ppoUpdate,
  resolveConfig,
  SeededRng,
  selectActions,
  type TokenPolicy,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import { disposedAfterEach, keyTokenTrainer, rolloutFromReset, SMALL } from './trainer-setup.js';

beforeAll(useCpu);
const live = disposedAfterEach();

/**
 * A language model given as a table: after the prompt, token 1 ("grab") has probability 0.6 and
 * token 4 ("wait") 0.2 (the other 0.2 is on tokens no label uses); after "grab", token 2
 * ("bread") 0.1 and token 3 ("chips") 0.3.
 */
const IDS: Record<string, number[]> = { 'grab bread': [1, 2], 'grab chips': [1, 3], wait: [4] };
const NEXT: Record<string, Record<number, number>> = {
  '': { 1: 0.6, 4: 0.2 },
  '1': { 2: 0.1, 3: 0.3 },
};
const tablePolicy: TokenPolicy = {
  encodePrompt: () => Int32Array.of(9),
  encodeContinuations: (_o, labels) => labels.map((l) => Int32Array.from(IDS[l]!)),
  scoreTokens: () => {
    throw new Error('the sampler scores through scoreCandidates');
  },
  scoreCandidates: async (prompts, cands) =>
    prompts.map((_, j) =>
      cands[j]!.map((ids) =>
        Float32Array.from(ids, (w, k) =>
          Math.log(NEXT[Array.from(ids.subarray(0, k)).join()]![w]!),
        ),
      ),
    ),
  tokenValues: () => {
    throw new Error('not needed');
  },
  promptValues: () => {
    throw new Error('not needed');
  },
  actorVariables: [],
  criticVariables: [],
};
const kitchen: TextStep = {
  observation: 'in the kitchen',
  actions: ['grab bread', 'grab chips', 'wait'],
  reward: 0,
  terminated: false,
  truncated: false,
  info: {},
};
const options = {
  candidateNormalisation: 'words' as const,
  maxNewTokens: 4,
  temperature: 1,
  topK: 0,
};

describe('the two samplers on a hand case', () => {
  it("TWOSOME's word-normalised softmax and the label tree's product give different policies", async () => {
    const act = (tokenSpace: 'vocabulary' | 'labels') =>
      selectActions(tablePolicy, [kitchen], {
        ...options,
        tokenSpace,
        greedy: true,
        rng: new SeededRng(1),
      });
    const words = await act('vocabulary');
    // softmax(log π(a)/words(a)) ∝ (√(0.6·0.1), √(0.6·0.3), 0.2) = (0.244949, 0.424264, 0.2).
    expect(Array.from(words.actionProbs[0]!)).toEqual(
      [0.2818054517861928, 0.48810136034358764, 0.23009318787021962].map((p) =>
        expect.closeTo(p, 6),
      ),
    );
    // The tree: P(grab) = 0.6/(0.6 + 0.2) = 0.75, P(bread | grab) = 0.1/0.4 = 0.25, P(wait) = 0.25.
    const tree = await act('labels');
    expect(Array.from(tree.actionProbs[0]!)).toEqual(
      [0.1875, 0.5625, 0.25].map((p) => expect.closeTo(p, 6)),
    );
    // Both take "grab chips" greedily; the stored token log-probs are each sampler's own.
    expect(words.labels).toEqual(['grab chips']);
    expect(tree.labels).toEqual(['grab chips']);
    expect(Array.from(words.logProbs[0]!)).toEqual(
      [Math.log(0.6), Math.log(0.3)].map((x) => expect.closeTo(x, 6)),
    );
    expect(Array.from(tree.logProbs[0]!)).toEqual(
      [Math.log(0.75), Math.log(0.75)].map((x) => expect.closeTo(x, 6)),
    );
    expect(tree.candidates[0]!.actionLogProb).toBeCloseTo(Math.log(0.5625), 6);
    expect(Array.from(tree.candidates[0]!.normalisers)).toEqual([1, 1, 1]);
  });
});

describe("TWOSOME with tokenSpace 'labels'", () => {
  const task = keyTokenTask(4);
  const small: Partial<PpoConfig> = { ...SMALL, tokenSpace: 'labels' };
  const trainerFor = (algorithm: 'poad' | 'twosome', config: Partial<PpoConfig> = small) =>
    keyTokenTrainer(task, { ...config, algorithm, seed: 3 }, 7, live);

  it('acts with exactly the probabilities POAD acts with at the same weights', async () => {
    const poad = trainerFor('poad');
    const twosome = trainerFor('twosome');
    const a = (await poad.trainer.iterate()).buffer;
    const b = (await twosome.trainer.iterate()).buffer;
    expect(Array.from(b.chosen)).toEqual(Array.from(a.chosen));
    expect(Array.from(b.actionLogProbs)).toEqual(Array.from(a.actionLogProbs));
    expect(Array.from(b.logProbs)).toEqual(Array.from(a.logProbs));
    // And the probabilities are the product's: each sample's per-token log-probs sum to its
    // label's log-prob (forced tokens contribute 0).
    for (let i = 0; i < b.size; i++) {
      let sum = 0;
      for (let k = b.actionOffsets[i]!; k < b.actionOffsets[i + 1]!; k++) sum += b.logProbs[k]!;
      expect(b.actionLogProbs[i]!).toBeCloseTo(sum, 6);
    }
    // Under the vocabulary sampler the same weights give other label probabilities.
    const steps = await new KeyTokenVecEnv(task, 1).reset();
    const sampler = (tokenSpace: 'vocabulary' | 'labels') =>
      selectActions(twosome.policy, steps, {
        ...options,
        tokenSpace,
        greedy: true,
        rng: new SeededRng(0),
      });
    const tree = (await sampler('labels')).actionProbs[0]!;
    const words = (await sampler('vocabulary')).actionProbs[0]!;
    expect(Math.max(...tree.map((p, c) => Math.abs(p - words[c]!)))).toBeGreaterThan(1e-3);
  });

  it("recomputes the acting label log-prob in its update (ratio 1 at the rollout's weights)", async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 5 });
    live.push(policy);
    const env = new KeyTokenVecEnv(task, 4);
    const base = { ...small, algorithm: 'twosome' as const, numSteps: 4 };
    const { buffer } = await rolloutFromReset({ policy, env, config: resolveConfig(base) }, 2);
    // lr 0: every minibatch sees the rollout's weights; a tiny clip counts any ratio ≠ 1.
    const update = (tokenSpace: 'vocabulary' | 'labels') => {
      const config = resolveConfig({ ...base, tokenSpace, lr: 0, criticLr: 0, clip: 1e-4 });
      const actorOptimizer = new Adam(policy.actorVariables, { lr: 0 });
      const criticOptimizer = new Adam(policy.criticVariables, { lr: 0 });
      live.push(actorOptimizer, criticOptimizer);
      return ppoUpdate({
        policy,
        buffer,
        advantages: computeAdvantages(buffer, config),
        config,
        rng: new SeededRng(4),
        actorOptimizer,
        criticOptimizer,
      });
    };
    const same = await update('labels');
    expect(same.clipFraction).toBe(0);
    expect(same.approxKl).toBeLessThan(1e-9);
    // The word-normalised softmax recomputed over the same candidates is another distribution.
    const other = await update('vocabulary');
    expect(other.clipFraction).toBeGreaterThan(0.5);
  });

  it('learns the key-token task, and the same seed repeats its numbers', async () => {
    const run = async () => {
      const { trainer } = trainerFor('twosome', { ...small, lr: 1e-2 });
      const rewards: number[] = [];
      let last = new Float32Array(0);
      for (let i = 0; i < 8; i++) {
        const r = await trainer.iterate();
        rewards.push(r.rollout.meanReward);
        last = Float32Array.from(r.buffer.actionLogProbs);
      }
      return { rewards, last };
    };
    const a = await run();
    const b = await run();
    expect(b).toEqual(a);
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    expect(mean(a.rewards.slice(-3))).toBeGreaterThan(mean(a.rewards.slice(0, 3)));
  });
});
