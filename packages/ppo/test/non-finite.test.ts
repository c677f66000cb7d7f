// The non-finite guard: a minibatch whose loss or gradient norm is NaN/±∞ skips that optimiser
// step and leaves the weights and the optimiser state as they were; K in a row stop the update;
// checkpoints with non-finite arrays are refused; non-finite rewards never reach the buffer.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  assertFiniteCheckpoint,
  computeAdvantages,
  NonFiniteStateError,
  NonFiniteUpdateError,
  PolicyContractError,
  PpoConfigError,
  PpoTrainer,
  ppoUpdate,
  resolveConfig,
  SeededRng,
  type TokenBatch,
  type TokenPolicy,
  type TokenScores,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import { disposedAfterEach, rolloutFromReset } from './trainer-setup.js';

beforeAll(useCpu);

const task = keyTokenTask(4);
const live = disposedAfterEach();

/**
 * The policy with faults switched on by call number: `actorGrad(n)` makes the n-th backward pass
 * through the actor's log-probs NaN (the loss stays finite, the gradient does not);
 * `criticValue(n)` makes the n-th critic pass return NaN values (a non-finite loss).
 */
function faulty(
  policy: TinyPolicy,
  faults: { actorGrad?: (n: number) => boolean; criticValue?: (n: number) => boolean },
): TokenPolicy & { armed: boolean } {
  let backward = 0;
  let critic = 0;
  const nanGrad = tf.customGrad((x, _save) => ({
    value: (x as tf.Tensor).clone(),
    gradFunc: (dy: tf.Tensor) => {
      backward += 1;
      return faults.actorGrad?.(backward) ? tf.mul(dy, Number.NaN) : dy.clone();
    },
  }));
  const wrapper = Object.assign(Object.create(policy) as TinyPolicy, {
    armed: false,
    scoreTokens(batch: TokenBatch): TokenScores {
      const s = policy.scoreTokens(batch);
      if (!wrapper.armed || !faults.actorGrad) return s;
      return { logProbs: nanGrad(s.logProbs) as tf.Tensor2D, entropies: s.entropies };
    },
    tokenValues(batch: TokenBatch): tf.Tensor2D {
      const v = policy.tokenValues(batch);
      if (!wrapper.armed || !faults.criticValue) return v;
      critic += 1;
      return faults.criticValue(critic) ? (tf.mul(v, Number.NaN) as tf.Tensor2D) : v;
    },
  });
  return wrapper;
}

const weights = (vars: readonly tf.Variable[]) => vars.map((v) => Array.from(v.dataSync()));

/** A rollout of the key-token task, then the update arguments for `policy` (16 samples). */
async function prepared(
  faults: Parameters<typeof faulty>[1],
  config: Parameters<typeof resolveConfig>[0] = {},
) {
  const base = new TinyPolicy({ words: task.words, seed: 5 });
  live.push(base);
  const policy = faulty(base, faults);
  const cfg = resolveConfig({
    numSteps: 4,
    epochs: 1,
    numMinibatches: 4,
    lr: 3e-3,
    criticLr: 1e-2,
    targetKl: 0,
    ...config,
  });
  const { buffer } = await rolloutFromReset(
    { policy, env: new KeyTokenVecEnv(task, 4), config: cfg },
    1,
  );
  const actorOptimizer = new Adam(policy.actorVariables, { lr: 3e-3 });
  const criticOptimizer = new Adam(policy.criticVariables, { lr: 1e-2 });
  live.push(actorOptimizer, criticOptimizer);
  policy.armed = true;
  return {
    policy,
    args: {
      policy,
      buffer,
      advantages: computeAdvantages(buffer, cfg),
      config: cfg,
      rng: new SeededRng(9),
      actorOptimizer,
      criticOptimizer,
    },
  };
}

describe('non-finite guard in ppoUpdate', () => {
  it('a NaN actor gradient in every minibatch leaves the actor and its optimiser untouched', async () => {
    const { policy, args } = await prepared({ actorGrad: () => true });
    const actor = weights(policy.actorVariables);
    const critic = weights(policy.criticVariables);
    const adamBefore = await args.actorOptimizer.getState();
    const before = tf.memory().numTensors;
    const d = await ppoUpdate(args);
    expect(weights(policy.actorVariables)).toEqual(actor);
    expect(await args.actorOptimizer.getState()).toEqual(adamBefore);
    expect(args.actorOptimizer.stepCount).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
    // The critic is finite and still learns.
    expect(args.criticOptimizer.stepCount).toBe(4);
    expect(weights(policy.criticVariables)).not.toEqual(critic);
    expect(d.minibatches).toBe(4);
    expect(d.nonFiniteSkips).toBe(4);
    expect(d.nonFiniteStreak).toBe(4);
    expect(d.actorSteps).toBe(0);
    expect(d.skippedMinibatches).toBe(0);
    expect(Number.isNaN(d.actorGradNorm)).toBe(true);
    // The means leave out non-finite minibatches: no actor mean is left, the critic's is finite.
    expect(Number.isNaN(d.policyLoss)).toBe(true);
    expect(Number.isFinite(d.valueLoss)).toBe(true);
  });

  it('skips only the poisoned minibatches and recovers; the streak restarts at a finite one', async () => {
    const { policy, args } = await prepared({ actorGrad: (n) => n === 2 || n === 3 });
    const steps: number[] = [];
    const step = args.actorOptimizer.step.bind(args.actorOptimizer);
    args.actorOptimizer.step = (g) => {
      steps.push(args.actorOptimizer.stepCount + 1);
      step(g);
    };
    const d = await ppoUpdate(args);
    for (const w of weights(policy.actorVariables).flat()) expect(Number.isFinite(w)).toBe(true);
    expect(steps).toEqual([1, 2]);
    expect(d.nonFiniteSkips).toBe(2);
    expect(d.nonFiniteStreak).toBe(0);
    expect(d.actorSteps).toBe(2);
    expect(Number.isFinite(d.actorGradNorm)).toBe(true);
    expect(Number.isFinite(d.policyLoss)).toBe(true);
  });

  it('a NaN critic loss skips the critic step only; the critic and its moments stay as they were', async () => {
    const { policy, args } = await prepared({ criticValue: () => true });
    const critic = weights(policy.criticVariables);
    const adamBefore = await args.criticOptimizer.getState();
    const d = await ppoUpdate(args);
    expect(weights(policy.criticVariables)).toEqual(critic);
    expect(await args.criticOptimizer.getState()).toEqual(adamBefore);
    expect(d.nonFiniteSkips).toBe(4);
    expect(Number.isNaN(d.valueLoss)).toBe(true);
    expect(Number.isNaN(d.criticGradNorm)).toBe(true);
    expect(args.actorOptimizer.stepCount).toBe(4);
    expect(d.actorSteps).toBe(4);
  });

  it('throws NonFiniteUpdateError after maxNonFiniteSkips in a row, counting across updates', async () => {
    // Backward passes 3 and 4 (the last two minibatches of the first update), then all of the next.
    const { policy, args } = await prepared({ actorGrad: (n) => n >= 3 }, { maxNonFiniteSkips: 3 });
    const first = await ppoUpdate(args);
    expect(first.nonFiniteStreak).toBe(2);
    const actor = weights(policy.actorVariables);
    const before = tf.memory().numTensors;
    const err = await ppoUpdate({ ...args, nonFiniteStreak: first.nonFiniteStreak }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NonFiniteUpdateError);
    expect((err as NonFiniteUpdateError).streak).toBe(3);
    expect((err as Error).message).toMatch(
      /3 consecutive minibatches .*epoch 1, minibatch 1: actor gradient norm NaN.*maxNonFiniteSkips/,
    );
    expect(weights(policy.actorVariables)).toEqual(actor);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('PpoTrainer stops with the iteration in the error and the weights finite', async () => {
    const base = new TinyPolicy({ words: task.words, seed: 5 });
    live.push(base);
    const policy = faulty(base, { actorGrad: () => true });
    const trainer = new PpoTrainer({
      policy,
      env: new KeyTokenVecEnv(task, 4),
      config: { numSteps: 4, numMinibatches: 4, maxNonFiniteSkips: 6, targetKl: 0 },
    });
    live.push(trainer);
    await trainer.iterate();
    policy.armed = true;
    const r = await trainer.iterate();
    expect(r.update.nonFiniteSkips).toBe(4);
    expect(trainer.nonFiniteStreak).toBe(4);
    expect(trainer.counters.actorUpdates).toBe(4);
    await expect(trainer.iterate()).rejects.toThrow(/^iteration 3: 6 consecutive minibatches/);
    assertFiniteCheckpoint(await trainer.getState());
  });

  it('maxNonFiniteSkips must be a positive integer', () => {
    expect(() => resolveConfig({ maxNonFiniteSkips: 0 })).toThrow(PpoConfigError);
    expect(() => resolveConfig({ maxNonFiniteSkips: 2.5 })).toThrow(/config.maxNonFiniteSkips/);
    expect(resolveConfig().maxNonFiniteSkips).toBe(8);
  });
});

describe('assertFiniteCheckpoint', () => {
  it('names the first tensor holding a NaN or an infinity', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 2 });
    const trainer = new PpoTrainer({ policy, env: new KeyTokenVecEnv(task, 2) });
    live.push(policy, trainer);
    const state = await trainer.getState();
    assertFiniteCheckpoint(state);
    state.criticOptimizer.v[1]![3] = Number.POSITIVE_INFINITY;
    state.criticOptimizer.v[1]![5] = Number.NaN;
    expect(() => assertFiniteCheckpoint(state)).toThrow(NonFiniteStateError);
    expect(() => assertFiniteCheckpoint(state)).toThrow(
      /criticOptimizer\.v\[1\] holds 2 non-finite values of \d+ \(the first at index 3: Infinity\)/,
    );
    state.actorWeights[0]!.data[0] = Number.NaN;
    expect(() => assertFiniteCheckpoint(state)).toThrow(/actorWeights\[0\]/);
  });
});

describe('rewards entering the rollout', () => {
  it('a non-finite reward or a non-boolean flag is refused before the buffer is built', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 2 });
    live.push(policy);
    for (const [edit, message] of [
      [{ reward: Number.NaN }, /env 1 returned the reward NaN at rollout step 1/],
      [{ terminated: 'yes' }, /env 1 returned terminated yes/],
    ] as const) {
      const env = new KeyTokenVecEnv(task, 2);
      const step = env.step.bind(env);
      env.step = async (actions) => {
        const out = await step(actions);
        out[1] = { ...out[1]!, ...edit } as (typeof out)[number];
        return out;
      };
      const err = await rolloutFromReset(
        { policy, env, config: resolveConfig({ numSteps: 2 }) },
        1,
      ).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PolicyContractError);
      expect((err as Error).message).toMatch(message);
    }
  });
});
