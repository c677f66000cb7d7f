import { makeVecEnv } from '@poad/envs-core';
import { SeededRng } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  collectGroupRollout,
  type GroupConfig,
  GroupConfigError,
  GroupTrainer,
  resolveGroupConfig,
} from '../src/index.js';
import { KeyTokenEnv, keyTokenTask, RoomEnv, TinyPolicy, useCpu, WORDS } from './fixtures.js';

beforeAll(useCpu);
const live: { dispose(): void }[] = [];
afterEach(() => {
  for (const x of live.splice(0)) x.dispose();
});

const task = keyTokenTask(4);
const small: Partial<GroupConfig> = {
  groups: 2,
  groupSize: 4,
  numSteps: 4,
  epochs: 2,
  numMinibatches: 2,
  lr: 1e-2,
};

function setup(
  estimator: GroupConfig['estimator'],
  seed: number,
  extra: Partial<GroupConfig> = {},
) {
  const policy = new TinyPolicy({ words: WORDS, seed });
  const config = resolveGroupConfig({ ...small, estimator, seed, ...extra });
  const env = makeVecEnv(() => new KeyTokenEnv(task), config.groups * config.groupSize, {
    seed,
  });
  const trainer = new GroupTrainer({ policy, env, config });
  live.push(policy, trainer);
  return { policy, env, trainer };
}

describe('group rollouts', () => {
  it("start a group's episodes from one state, cut episodes at numSteps, and record every step", async () => {
    const policy = new TinyPolicy({ words: WORDS, seed: 3 });
    live.push(policy);
    const config = resolveGroupConfig({ groups: 3, groupSize: 2, numSteps: 3 });
    const env = makeVecEnv(() => new RoomEnv(5), 6, { seed: 1 });
    const r = await collectGroupRollout({ policy, env, config, rng: new SeededRng(7) });
    expect(r.seeds).toHaveLength(3);
    expect(r.episodes.map((e) => e.group)).toEqual([0, 0, 1, 1, 2, 2]);
    for (let k = 0; k < 3; k++) {
      const [a, b] = r.episodes.filter((e) => e.group === k);
      // One start state per group: the room of the group's seed.
      expect(a!.states[0]).toBe(`room ${r.seeds[k]! % 3} step 0`);
      expect(b!.states[0]).toBe(a!.states[0]);
    }
    let samples = 0;
    for (const e of r.episodes) {
      expect(e.samples.length).toBe(e.rewards.length);
      expect(e.states.length).toBe(e.rewards.length);
      expect(e.samples.length).toBeGreaterThanOrEqual(2);
      expect(e.samples.length).toBeLessThanOrEqual(3);
      const last = e.samples.at(-1)!;
      // Every episode's last step ends it: by the env (terminated) or cut at numSteps (truncated).
      expect(r.buffer.terminated[last]! + r.buffer.truncated[last]!).toBeGreaterThan(0);
      expect(e.finished).toBe(r.buffer.terminated[last] === 1);
      samples += e.samples.length;
    }
    expect(r.buffer.size).toBe(samples);
    expect(r.stats.envSteps).toBe(samples);
    // Every episode is reported: those the env ended with its summary, the cut ones as not
    // successful, with their discounted return (γ = the config's) and length.
    expect(r.stats.episodes.length).toBe(6);
    expect(r.stats.episodesCut).toBe(r.episodes.filter((e) => !e.finished).length);
    // Cut after 2 steps: the room ends an episode only on a good action at step 2 or later, so
    // an episode is cut unless its second action was good.
    const two = resolveGroupConfig({ groups: 3, groupSize: 2, numSteps: 2, gamma: 0.5 });
    const c = await collectGroupRollout({ policy, env, config: two, rng: new SeededRng(8) });
    expect(c.stats.episodes.map((s) => s.env).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    const cutOnes = c.stats.episodes.filter((s) => !c.episodes[s.env]!.finished);
    expect(cutOnes.length).toBeGreaterThan(0);
    expect(c.stats.episodesCut).toBe(cutOnes.length);
    for (const s of cutOnes) {
      const [r0, r1] = c.episodes[s.env]!.rewards as [number, number];
      expect(s).toEqual({
        env: s.env,
        discountedReturn: r0 + 0.5 * r1,
        length: 2,
        success: false,
        cut: true,
      });
    }
    for (const [played, s] of [
      ...r.stats.episodes.map((s) => [r, s] as const),
      ...c.stats.episodes.map((s) => [c, s] as const),
    ])
      expect(s.cut === true).toBe(!played.episodes[s.env]!.finished);
    await expect(
      collectGroupRollout({
        policy,
        env: makeVecEnv(() => new RoomEnv(), 4),
        config,
        rng: new SeededRng(1),
      }),
    ).rejects.toThrow(/groups × group-size = 3 × 2 = 6 environments, got 4/);
  });
});

describe('GroupTrainer on the key-token task', () => {
  for (const estimator of ['grpo', 'rloo', 'gigpo'] as const) {
    it(`${estimator}: learns the key token (mean reward of the last 5 iterations ≥ 0.9)`, async () => {
      const { trainer } = setup(estimator, 2);
      const rewards: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await trainer.iterate();
        rewards.push(r.rollout.meanReward);
        expect(r.rollout.envSteps).toBe(8);
        expect(Number.isFinite(r.update.policyLoss)).toBe(true);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      // Four keys: an untrained policy is right about a quarter of the time.
      expect(mean(rewards.slice(0, 5))).toBeLessThan(0.6);
      expect(mean(rewards.slice(-5))).toBeGreaterThanOrEqual(0.9);
    }, 120_000);
  }

  it('the same seed gives identical metrics and weights; a checkpoint resumes bit for bit', async () => {
    const strip = (u: Record<string, number>) => {
      const { seconds: _s, tokensPerSec: _t, ...rest } = u;
      return rest;
    };
    const a = setup('gigpo', 5);
    const b = setup('gigpo', 5);
    await a.trainer.iterate();
    await b.trainer.iterate();
    const state = JSON.parse(
      JSON.stringify(await b.trainer.getState(), (_k, v) =>
        v instanceof Float32Array ? { f32: Array.from(v) } : v,
      ),
      (_k, v) => (v && typeof v === 'object' && 'f32' in v ? Float32Array.from(v.f32) : v),
    );
    const c = setup('gigpo', 9);
    c.trainer.setState(state);
    const [ra, rc] = [await a.trainer.iterate(), await c.trainer.iterate()];
    expect(strip(rc.update as unknown as Record<string, number>)).toEqual(
      strip(ra.update as unknown as Record<string, number>),
    );
    expect(Array.from(rc.advantages.perSample)).toEqual(Array.from(ra.advantages.perSample));
    const weights = (p: TinyPolicy) => p.actorVariables.map((v) => Array.from(v.dataSync()));
    expect(weights(c.policy)).toEqual(weights(a.policy));
    expect(() => setup('grpo', 1).trainer.setState(state)).toThrow(
      /saved with estimator 'gigpo', this trainer runs 'grpo'/,
    );
  });

  it('reports each group’s return spread and the share of groups without one', async () => {
    const { trainer } = setup('grpo', 4);
    const r = await trainer.iterate();
    expect(r.advantages.spread).toHaveLength(2);
    for (const s of r.advantages.spread) expect(s === 0 || s === 1).toBe(true);
    const zero = r.advantages.spread.filter((s) => s === 0).length / 2;
    expect(r.advantages.zeroSpreadShare).toBe(zero);
    // A group without spread gives its steps advantage 0.
    r.episodes.forEach((e) => {
      if (r.advantages.spread[e.group] === 0)
        for (const s of e.samples) expect(r.advantages.perSample[s]).toBe(0);
    });
  });

  it('a KL term needs a reference policy, and is 0 on the first minibatch with the base as reference', async () => {
    const { trainer } = setup('grpo', 6, { klCoef: 0.1 });
    await expect(trainer.iterate()).rejects.toThrow(GroupConfigError);
    const policy = new TinyPolicy({ words: WORDS, seed: 6 });
    const frozen = new TinyPolicy({ words: WORDS, seed: 6 });
    live.push(policy, frozen);
    // The reference is a frozen copy of the initial policy.
    const withRef = Object.assign(Object.create(policy), {
      referenceLogProbs: (batch: Parameters<TinyPolicy['scoreTokens']>[0]) =>
        frozen.scoreTokens(batch).logProbs,
    }) as TinyPolicy;
    const config = resolveGroupConfig({
      ...small,
      klCoef: 0.1,
      seed: 6,
      epochs: 1,
      numMinibatches: 1,
    });
    const env = makeVecEnv(() => new KeyTokenEnv(task), 8, { seed: 6 });
    const t = new GroupTrainer({ policy: withRef, env, config });
    live.push(t);
    const r = await t.iterate();
    // One minibatch before any step: π = π_ref, so the k3 estimate is 0.
    expect(Math.abs(r.update.klToReference)).toBeLessThan(1e-6);
    expect(Math.abs(r.update.approxKl)).toBeLessThan(1e-6);
  });

  it('leaves no tensor behind across iterations', async () => {
    const { trainer } = setup('gigpo', 7);
    await trainer.iterate();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await trainer.iterate();
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('non-finite minibatches', () => {
  it('skip their step, carry the streak across updates and stop at maxNonFiniteSkips', async () => {
    const { policy, trainer } = setup('grpo', 8, { maxNonFiniteSkips: 6 });
    await trainer.iterate();
    // A NaN gradient through the log-probs (the loss stays finite): every minibatch skips.
    let armed = false;
    const nanGrad = tf.customGrad((x, _save) => ({
      value: (x as tf.Tensor).clone(),
      gradFunc: (dy: tf.Tensor) => tf.mul(dy, Number.NaN),
    }));
    const score = policy.scoreTokens.bind(policy);
    policy.scoreTokens = (batch) => {
      const s = score(batch);
      if (!armed) return s;
      return { logProbs: nanGrad(s.logProbs) as typeof s.logProbs, entropies: s.entropies };
    };
    const weights = () => policy.actorVariables.map((v) => Array.from(v.dataSync()));
    const before = weights();
    armed = true;
    const r = await trainer.iterate();
    expect([r.update.nonFiniteSkips, r.update.nonFiniteStreak, r.update.actorSteps]).toEqual([
      4, 4, 0,
    ]);
    expect(weights()).toEqual(before);
    await expect(trainer.iterate()).rejects.toThrow(
      /^iteration 3: 6 consecutive minibatches .*epoch 1, minibatch 2: loss .*gradient norm NaN/,
    );
    expect(weights()).toEqual(before);
    armed = false;
    const again = await trainer.iterate();
    expect([again.update.nonFiniteSkips, again.update.nonFiniteStreak]).toEqual([0, 0]);
    expect(weights()).not.toEqual(before);
  });
});
