import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  CheckpointMismatchError,
  computeAdvantages,
  type PpoConfig,
  PpoConfigError,
  PpoTrainer,
  ppoUpdate,
  resolveConfig,
  SeededRng,
  type TokenBatch,
  type TokenPolicy,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask, TruncatingVecEnv } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import {
  disposedAfterEach,
  keyTokenTrainer,
  rolloutFromReset,
  SMALL as small,
} from './trainer-setup.js';

beforeAll(useCpu);

const task = keyTokenTask(4);
const live = disposedAfterEach();

const setup = (config: Partial<PpoConfig>, seed = 1, policySeed = 7) =>
  keyTokenTrainer(task, { ...config, seed }, policySeed, live);

const weights = (vars: readonly tf.Variable[]) => vars.map((v) => Array.from(v.dataSync()));

describe('PpoTrainer on the key-token task', () => {
  for (const algorithm of ['poad', 'ntpo', 'archer', 'twosome'] as const) {
    it(`${algorithm}: the same seed gives identical metrics and weights twice`, async () => {
      const run = async () => {
        const { policy, trainer } = setup({ ...small, algorithm });
        const reports = [];
        for (let i = 0; i < 2; i++) {
          const r = await trainer.iterate();
          const { seconds, tokensPerSec, ...u } = r.update;
          reports.push({
            u,
            reward: r.rollout.meanReward,
            adv: Array.from(r.advantages.advantages),
          });
        }
        return { reports, w: weights([...policy.actorVariables, ...policy.criticVariables]) };
      };
      const a = await run();
      const b = await run();
      expect(b).toEqual(a);
      expect(Number.isFinite(a.reports[1]!.u.policyLoss)).toBe(true);
      expect(a.reports[0]!.u.minibatches).toBe(4);
    });
  }

  it('a different seed gives a different run', async () => {
    const r1 = await setup(small, 1).trainer.iterate();
    const r2 = await setup(small, 2).trainer.iterate();
    expect(r1.update.policyLoss).not.toBe(r2.update.policyLoss);
  });
});

/** Wraps a policy so that every padded column holds NaN (log-probs, entropies) or 1e6 (values). */
function garbagePadding(inner: TokenPolicy): TokenPolicy {
  const pad = (batch: TokenBatch, x: tf.Tensor, fill: number) => {
    const m = new Float32Array(batch.prompts.length * batch.width);
    for (const [i, a] of batch.actions.entries())
      m.fill(1, i * batch.width, i * batch.width + a.length);
    const real = tf.cast(tf.tensor2d(m, [batch.prompts.length, batch.width]), 'bool');
    return tf.where(real, x, tf.fill(x.shape, fill)) as tf.Tensor2D;
  };
  return {
    encodePrompt: (o) => inner.encodePrompt(o),
    encodeContinuations: (o, c) => inner.encodeContinuations(o, c),
    scoreTokens: (batch) => {
      const s = inner.scoreTokens(batch);
      return {
        logProbs: pad(batch, s.logProbs, Number.NaN),
        entropies: pad(batch, s.entropies, Number.NaN),
      };
    },
    tokenValues: (batch) => pad(batch, inner.tokenValues(batch), 1e6),
    promptValues: (p) => inner.promptValues(p),
    actorVariables: inner.actorVariables,
    criticVariables: inner.criticVariables,
  };
}

describe('behaviour log-probs', () => {
  const cases = [
    ...(['poad', 'ntpo', 'archer', 'twosome'] as const).map((a) => [a, 'vocabulary'] as const),
    ...(['poad', 'ntpo', 'archer', 'twosome'] as const).map((a) => [a, 'labels'] as const),
  ];
  for (const [algorithm, tokenSpace] of cases) {
    it(`${algorithm} (${tokenSpace}): stored log-probs equal the update's recomputation (KL ≈ 0, no clipping before any step)`, async () => {
      // One minibatch, one epoch: it is evaluated with the parameters that acted.
      const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 4 });
      live.push(policy);
      const trainer = new PpoTrainer({
        policy,
        env: new TruncatingVecEnv(4, 3),
        config: {
          ...small,
          algorithm,
          tokenSpace,
          epochs: 1,
          numMinibatches: 1,
          gradAccumulation: 4,
        },
      });
      live.push(trainer);
      const { update } = await trainer.iterate();
      expect(update.approxKl).toBeLessThan(1e-6); // float32 rounding only
      expect(update.clipFraction).toBe(0);
      expect(update.skippedMinibatches).toBe(0);
    });
  }
});

/** Wraps a policy so that it returns flat `[Σ lengths]` per-token outputs instead of `[B, L]`. */
function flatOutputs(inner: TokenPolicy): TokenPolicy {
  const flat = (batch: TokenBatch, x: tf.Tensor) =>
    tf.concat(
      batch.actions.map((a, i) => tf.reshape(tf.slice(x, [i, 0], [1, a.length]), [a.length])),
    ) as tf.Tensor1D;
  return {
    ...garbagePadding(inner),
    scoreTokens: (batch) => {
      const s = inner.scoreTokens(batch);
      return { logProbs: flat(batch, s.logProbs), entropies: flat(batch, s.entropies) };
    },
    tokenValues: (batch) => flat(batch, inner.tokenValues(batch)),
  };
}

describe('prepareValues', () => {
  for (const algorithm of ['poad', 'twosome'] as const) {
    it(`${algorithm}: every row reaches the critic only after it was prepared`, async () => {
      const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 3 });
      live.push(policy);
      const prepared = new Set<string>();
      const key = (p: Int32Array, a: Int32Array) => `${p.join(',')}|${a.join(',')}`;
      let calls = 0;
      const checking: TokenPolicy = {
        ...garbagePadding(policy),
        scoreTokens: (b) => policy.scoreTokens(b),
        prepareValues: async (prompts, actions) => {
          calls += 1;
          prompts.forEach((p, i) => {
            prepared.add(key(p, actions[i]!));
          });
        },
        tokenValues: (b) => {
          b.prompts.forEach((p, i) => {
            if (!prepared.has(key(p, b.actions[i]!))) throw new Error('unprepared tokenValues row');
          });
          return policy.tokenValues(b);
        },
        promptValues: (prompts) => {
          for (const p of prompts) {
            if (!prepared.has(key(p, new Int32Array(0))))
              throw new Error('unprepared promptValues row');
          }
          return policy.promptValues(prompts);
        },
      };
      const trainer = new PpoTrainer({
        policy: checking,
        env: new TruncatingVecEnv(4, 3),
        config: { ...small, algorithm },
      });
      live.push(trainer);
      const r = await trainer.iterate();
      expect(Number.isFinite(r.update.valueLoss)).toBe(true);
      expect(calls).toBeGreaterThan(small.numSteps!);
    });
  }
});

describe('padding', () => {
  for (const algorithm of ['poad', 'twosome'] as const) {
    it(`${algorithm}: flat per-token outputs train exactly like padded ones`, async () => {
      const run = async (wrap: boolean) => {
        const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 3 });
        live.push(policy);
        const trainer = new PpoTrainer({
          policy: wrap ? flatOutputs(policy) : policy,
          env: new TruncatingVecEnv(4, 3),
          config: { ...small, algorithm, gradAccumulation: 2 },
        });
        live.push(trainer);
        const r = await trainer.iterate();
        const { seconds, tokensPerSec, ...u } = r.update;
        return { u, w: weights([...policy.actorVariables, ...policy.criticVariables]) };
      };
      expect(await run(true)).toEqual(await run(false));
    });
  }

  for (const algorithm of ['poad', 'twosome'] as const) {
    it(`${algorithm}: NaN / 1e6 in padded columns change neither the metrics nor the weights`, async () => {
      // Candidate lengths differ (2 and 3 tokens), so every batch is padded.
      const run = async (wrap: boolean) => {
        const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 3 });
        live.push(policy);
        const env = new TruncatingVecEnv(4, 3);
        const trainer = new PpoTrainer({
          policy: wrap ? garbagePadding(policy) : policy,
          env,
          config: { ...small, algorithm, gradAccumulation: 2 },
        });
        live.push(trainer);
        const r = await trainer.iterate();
        const { seconds, tokensPerSec, ...u } = r.update;
        return { u, w: weights([...policy.actorVariables, ...policy.criticVariables]) };
      };
      const clean = await run(false);
      const dirty = await run(true);
      expect(Number.isFinite(clean.u.policyLoss)).toBe(true);
      expect(dirty).toEqual(clean);
    });
  }
});

describe('approximate-KL early stop (§2.2 skip semantics)', () => {
  async function rollout(seed: number) {
    const policy = new TinyPolicy({ words: task.words, seed });
    live.push(policy);
    const config = resolveConfig({ ...small, epochs: 1, numMinibatches: 16 });
    const { buffer, stats } = await rolloutFromReset(
      { policy, env: new KeyTokenVecEnv(task, 4), config },
      1,
    );
    // Restricted action spaces report the mean label mass of their steps, a probability.
    expect(stats.labelMass).toBeGreaterThan(0);
    expect(stats.labelMass).toBeLessThanOrEqual(1 + 1e-6);
    return { policy, buffer, config };
  }

  /**
   * One ppoUpdate from the weights `init` (the actor's, then the critic's) with fresh Adams and
   * the minibatch order of seed 9; the weights after it and the actor optimiser's step count.
   */
  async function updateFrom(
    o: Omit<Parameters<typeof ppoUpdate>[0], 'rng' | 'actorOptimizer' | 'criticOptimizer'>,
    init: number[][],
  ) {
    const { actorVariables, criticVariables } = o.policy;
    writeBack([...actorVariables, ...criticVariables], init);
    const actorOptimizer = new Adam(actorVariables, { lr: 1e-3 });
    const criticOptimizer = new Adam(criticVariables, { lr: 1e-2 });
    try {
      const d = await ppoUpdate({ ...o, rng: new SeededRng(9), actorOptimizer, criticOptimizer });
      return {
        d,
        actor: weights(actorVariables),
        critic: weights(criticVariables),
        steps: actorOptimizer.stepCount,
      };
    } finally {
      actorOptimizer.dispose();
      criticOptimizer.dispose();
    }
  }

  it('skips exactly the minibatches over the threshold; the critic still steps; later minibatches run', async () => {
    const { policy, buffer, config } = await rollout(5);
    const advantages = computeAdvantages(buffer, config);
    // Make half of the samples look stale: their behaviour log-probs are 1 nat too high.
    const stale = new Set([0, 3, 4, 9, 10, 11, 14, 15]);
    for (const i of stale) {
      for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++)
        buffer.logProbs[k]! += 1;
    }
    const initActor = weights(policy.actorVariables);
    const initCritic = weights(policy.criticVariables);
    const runUpdate = (targetKl: number) =>
      updateFrom({ policy, buffer, advantages, config: { ...config, targetKl } }, [
        ...initActor,
        ...initCritic,
      ]);
    // One sample per minibatch: a stale sample has KL = e^{-1} − 1 + 1 ≈ 0.37 > 0.02.
    const withStop = await runUpdate(0.02);
    expect(withStop.d.minibatches).toBe(16);
    expect(withStop.d.skippedMinibatches).toBe(stale.size);
    expect(withStop.steps).toBe(16 - stale.size);
    expect(withStop.actor).not.toEqual(initActor);
    // The critic never depends on the actor, so its trajectory is the same with or without skips.
    const noStop = await runUpdate(0);
    expect(noStop.d.skippedMinibatches).toBe(0);
    expect(withStop.critic).toEqual(noStop.critic);
    expect(withStop.critic).not.toEqual(initCritic);
    // Every sample stale: every actor step is skipped and the actor never moves.
    for (let i = 0; i < buffer.size; i++) {
      if (stale.has(i)) continue;
      for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++)
        buffer.logProbs[k]! += 1;
    }
    const allStale = await runUpdate(0.02);
    expect(allStale.d.skippedMinibatches).toBe(16);
    expect(allStale.steps).toBe(0);
    expect(allStale.actor).toEqual(initActor);
    expect(allStale.critic).toEqual(noStop.critic);
  });

  it('gradient accumulation over chunks gives the same update as one pass', async () => {
    const { policy, buffer, config } = await rollout(6);
    const advantages = computeAdvantages(buffer, config);
    const init = weights([...policy.actorVariables, ...policy.criticVariables]);
    const run = async (gradAccumulation: number) => {
      const { d, actor, critic } = await updateFrom(
        { policy, buffer, advantages, config: { ...config, numMinibatches: 2, gradAccumulation } },
        init,
      );
      return { d, w: [...actor, ...critic].flat() };
    };
    const one = await run(1);
    const four = await run(4);
    expect(four.d.policyLoss).toBeCloseTo(one.d.policyLoss, 5);
    expect(four.d.actorGradNorm).toBeCloseTo(one.d.actorGradNorm, 4);
    for (const [i, x] of one.w.entries()) expect(four.w[i]).toBeCloseTo(x, 4);
    expect(one.w).not.toEqual(init.flat());
  });
});

function writeBack(vars: readonly tf.Variable[], data: number[][]): void {
  for (const [i, v] of vars.entries()) v.assign(tf.tensor(data[i]!, v.shape));
}

describe('memory', () => {
  it('no tensor leaks across 50 updates (token level and twosome)', {
    timeout: 60_000,
  }, async () => {
    for (const algorithm of ['poad', 'twosome'] as const) {
      const policy = new TinyPolicy({ words: task.words, seed: 2 });
      live.push(policy);
      const config = resolveConfig({
        ...small,
        algorithm,
        numSteps: 1,
        epochs: 1,
        numMinibatches: 1,
        gradAccumulation: 2,
        targetKl: 0.02,
      });
      const { buffer } = await rolloutFromReset(
        { policy, env: new KeyTokenVecEnv(task, 4), config },
        1,
      );
      const advantages = computeAdvantages(buffer, config);
      const actorOptimizer = new Adam(policy.actorVariables, { lr: 1e-3 });
      const criticOptimizer = new Adam(policy.criticVariables, { lr: 1e-2 });
      const rng = new SeededRng(3);
      const args = { policy, buffer, advantages, config, rng, actorOptimizer, criticOptimizer };
      await ppoUpdate(args);
      const before = tf.memory().numTensors;
      for (let i = 0; i < 50; i++) await ppoUpdate(args);
      expect(tf.memory().numTensors).toBe(before);
      actorOptimizer.dispose();
      criticOptimizer.dispose();
    }
  });

  it('a trainer created and disposed leaves no tensor behind', async () => {
    const { trainer } = setup(small);
    await trainer.iterate();
    const before = tf.memory().numTensors;
    const second = new PpoTrainer({
      policy: trainer.policy,
      env: trainer.env,
      config: small,
    });
    expect(tf.memory().numTensors).toBeGreaterThan(before);
    second.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('no tensor leaks across trainer iterations', async () => {
    const { trainer } = setup(small);
    await trainer.iterate();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await trainer.iterate();
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('checkpoints', () => {
  it('resume from plain-data state is bit-exact', async () => {
    const a = setup({ ...small, algorithm: 'ntpo' }, 4, 7);
    await a.trainer.iterate();
    const state = structuredClone(await a.trainer.getState());
    const next = await a.trainer.iterate();
    // Same frozen base (policy seed), but trained elsewhere first: weights, moments, generator
    // state and counters all differ until the checkpoint is restored.
    const b = setup({ ...small, algorithm: 'ntpo' }, 99, 7);
    await b.trainer.iterate();
    await b.trainer.iterate();
    b.trainer.setState(state);
    const resumed = await b.trainer.iterate();
    const strip = (r: typeof next) => {
      const { seconds, tokensPerSec, ...u } = r.update;
      return u;
    };
    expect(strip(resumed)).toEqual(strip(next));
    expect(weights(b.policy.actorVariables)).toEqual(weights(a.policy.actorVariables));
    expect(weights(b.policy.criticVariables)).toEqual(weights(a.policy.criticVariables));
    expect(b.trainer.counters).toEqual(a.trainer.counters);
    expect(b.trainer.counters.iterations).toBe(2);
  });

  it('a mismatched checkpoint is rejected without changing anything', async () => {
    const a = setup(small);
    const state = await a.trainer.getState();
    const c = setup({ ...small, algorithm: 'twosome' });
    expect(() => c.trainer.setState(state)).toThrow(CheckpointMismatchError);
    const before = weights(a.policy.actorVariables);
    const bad = { ...state, actorWeights: state.actorWeights.slice(1) };
    expect(() => a.trainer.setState(bad)).toThrow(CheckpointMismatchError);
    expect(weights(a.policy.actorVariables)).toEqual(before);
  });
});

describe('rollouts', () => {
  it('say where their time went: acting, values, environment steps', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 2 });
    live.push(policy);
    const inner = new KeyTokenVecEnv(task, 2);
    const delayMs = 40;
    // An environment that takes 40 ms per step: its share must show up as env time.
    const env = {
      size: inner.size,
      reset: () => inner.reset(),
      step: async (actions: readonly string[]) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return inner.step(actions);
      },
    };
    const config = resolveConfig({ numSteps: 4 });
    const { stats } = await rolloutFromReset({ policy, env, config }, 1);
    const { act, values, env: envSeconds } = stats.phaseSeconds;
    expect(envSeconds).toBeGreaterThanOrEqual((4 * (delayMs - 1)) / 1000);
    expect(act).toBeGreaterThan(0);
    expect(values).toBeGreaterThan(0);
    expect(act + values + envSeconds).toBeLessThanOrEqual(stats.seconds + 1e-9);
  });

  it('store V(final observation) for truncated steps, or nothing with truncationAsTermination', async () => {
    const words = [...task.words, 'k1', 'f1'];
    for (const truncationAsTermination of [false, true]) {
      const policy = new TinyPolicy({ words, seed: 1 });
      live.push(policy);
      const env = new TruncatingVecEnv(2, 2);
      const config = resolveConfig({ numSteps: 3, truncationAsTermination });
      const { buffer } = await rolloutFromReset({ policy, env, config }, 1);
      // Step 1 of each env is truncated; its final observation is "step step step".
      expect(Array.from(buffer.truncated)).toEqual([0, 0, 1, 1, 0, 0]);
      const expected = tf.tidy(
        () => policy.promptValues([policy.encode('step step step')]).dataSync()[0]!,
      );
      if (truncationAsTermination) {
        expect(Array.from(buffer.finalValues).every(Number.isNaN)).toBe(true);
      } else {
        expect(buffer.finalValues[2]).toBeCloseTo(expected, 6);
        expect(buffer.finalValues[3]).toBeCloseTo(expected, 6);
        expect(Number.isNaN(buffer.finalValues[0]!)).toBe(true);
      }
    }
  });

  it('keep the scored token ids and their log-probs; value column 0 is V(o)', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 1 });
    live.push(policy);
    const env = new KeyTokenVecEnv(task, 3);
    const config = resolveConfig({ numSteps: 2 });
    const { buffer } = await rolloutFromReset({ policy, env, config }, 4);
    for (let i = 0; i < buffer.size; i++) {
      const chosen = buffer.chosen[i]!;
      expect(Array.from(buffer.action(i))).toEqual(
        Array.from(policy.encode(task.candidates[chosen]!)),
      );
      const lp = tf.tidy(() =>
        Array.from(
          policy
            .scoreTokens({ prompts: [buffer.prompt(i)], actions: [buffer.action(i)], width: 4 })
            .logProbs.dataSync(),
        ),
      );
      for (let k = 0; k < 4; k++)
        expect(buffer.logProbs[buffer.actionOffsets[i]! + k]).toBeCloseTo(lp[k]!, 5);
      const v0 = tf.tidy(() => policy.promptValues([buffer.prompt(i)]).dataSync()[0]!);
      expect(buffer.values[buffer.actionOffsets[i]!]).toBeCloseTo(v0, 5);
      expect(Number.isFinite(buffer.actionLogProbs[i]!)).toBe(true);
    }
  });

  it('greedy sampling always picks the highest-scoring candidate', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 1 });
    live.push(policy);
    const env = new KeyTokenVecEnv(task, 2);
    const { buffer } = await rolloutFromReset(
      { policy, env, config: resolveConfig({ numSteps: 3, greedy: true }) },
      4,
    );
    expect(new Set(buffer.chosen).size).toBe(1);
  });

  it('open action spaces generate tokens and require policy.generate', async () => {
    const words = [...task.words, 'k1', 'f1'];
    const policy = new TinyPolicy({ words, seed: 1 });
    live.push(policy);
    const env = new TruncatingVecEnv(2, 5, { open: true });
    const config = resolveConfig({ numSteps: 2, maxNewTokens: 3 });
    await expect(rolloutFromReset({ policy, env, config }, 1)).rejects.toThrow(/generate/);
    const generating: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: (_p: Int32Array, o: { maxTokens: number; random: () => number }) => {
        const len = 1 + Math.floor(o.random() * o.maxTokens);
        const ids = Int32Array.from({ length: len }, (_, k) => (k % 3) + 1);
        return { tokenIds: ids, text: 'generated' };
      },
    });
    const { buffer, stats } = await rolloutFromReset({ policy: generating, env, config }, 1);
    expect(Array.from(buffer.chosen)).toEqual([-1, -1, -1, -1]);
    // No labels, so no label mass to report.
    expect(stats.labelMass).toBeNull();
    for (let i = 0; i < buffer.size; i++) {
      expect(buffer.actionLength(i)).toBeGreaterThanOrEqual(1);
      expect(buffer.actionLength(i)).toBeLessThanOrEqual(3);
    }
  });

  it('policy.generateBatch, when present, gets every open prompt at once and gives the same rollout', async () => {
    const words = [...task.words, 'k1', 'f1'];
    const policy = new TinyPolicy({ words, seed: 1 });
    live.push(policy);
    const one = (p: Int32Array, o: { maxTokens: number; random: () => number }) => {
      const len = 1 + Math.floor(o.random() * o.maxTokens);
      return {
        tokenIds: Int32Array.from({ length: len }, (_, k) => ((k + p.length) % 3) + 1),
        text: 'g',
      };
    };
    const batches: number[] = [];
    const sequential: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: one,
    });
    const batched: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: () => {
        throw new Error('generate must not be called when generateBatch exists');
      },
      generateBatch: (
        ps: readonly Int32Array[],
        o: { maxTokens: number; random: () => number },
      ) => {
        batches.push(ps.length);
        return ps.map((p) => one(p, o));
      },
    });
    const rollout = async (p: TokenPolicy) => {
      const env = new TruncatingVecEnv(3, 5, { open: true });
      const config = resolveConfig({ numSteps: 2, maxNewTokens: 4 });
      const { buffer } = await rolloutFromReset({ policy: p, env, config }, 7);
      return Array.from({ length: buffer.size }, (_, i) => Array.from(buffer.action(i)));
    };
    const a = await rollout(sequential);
    expect(await rollout(batched)).toEqual(a);
    expect(new Set(a.map((x) => x.length)).size).toBeGreaterThan(1);
    expect(batches).toEqual([3, 3]);
    const short: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: one,
      generateBatch: () => [],
    });
    await expect(rollout(short)).rejects.toThrow(/generateBatch.*returned 0 actions for 3 prompts/);
  });

  it("passes the config's stopCheckEvery to generation (default 8), which changes no token", async () => {
    const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 1 });
    live.push(policy);
    const seen: (number | undefined)[] = [];
    const batched: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: () => {
        throw new Error('generate must not be called when generateBatch exists');
      },
      generateBatch: (
        ps: readonly Int32Array[],
        o: { maxTokens: number; random: () => number; stopCheckEvery?: number },
      ) => {
        seen.push(o.stopCheckEvery);
        return ps.map(() => ({
          tokenIds: Int32Array.of(1 + Math.floor(o.random() * 3)),
          text: 'g',
        }));
      },
    });
    const rollout = async (extra: { stopCheckEvery?: number }) => {
      const env = new TruncatingVecEnv(2, 5, { open: true });
      const config = resolveConfig({ numSteps: 2, maxNewTokens: 4, ...extra });
      const { buffer } = await rolloutFromReset({ policy: batched, env, config }, 3);
      return Array.from({ length: buffer.size }, (_, i) => Array.from(buffer.action(i)));
    };
    const byDefault = await rollout({});
    expect(seen.splice(0)).toEqual([8, 8]);
    expect(await rollout({ stopCheckEvery: 3 })).toEqual(byDefault);
    expect(seen).toEqual([3, 3]);
    expect(() => resolveConfig({ stopCheckEvery: 0 })).toThrow(/stopCheckEvery/);
  });
});

describe('configuration errors', () => {
  /** A trainer on an open action space (a generating policy) with the given config. */
  function openSpaceTrainer(config: Partial<PpoConfig>): PpoTrainer {
    const policy = new TinyPolicy({ words: [...task.words, 'k1', 'f1'], seed: 1 });
    live.push(policy);
    const generating: TokenPolicy = Object.assign(Object.create(policy) as TinyPolicy, {
      generate: () => ({ tokenIds: new Int32Array([1, 2]), text: 'x' }),
    });
    const trainer = new PpoTrainer({
      policy: generating,
      env: new TruncatingVecEnv(2, 5, { open: true }),
      config: { ...small, ...config },
    });
    live.push(trainer);
    return trainer;
  }
  it('twosome on an open action space is refused with a clear error', async () => {
    const trainer = openSpaceTrainer({ algorithm: 'twosome' });
    await expect(trainer.iterate()).rejects.toThrow(/restricted action spaces/);
  });
  it("tokenSpace 'labels' is refused for open action spaces", async () => {
    expect(() => resolveConfig({ tokenSpace: 'tree' as 'labels' })).toThrow(/config.tokenSpace/);
    const trainer = openSpaceTrainer({ tokenSpace: 'labels' });
    await expect(trainer.iterate()).rejects.toThrow(/restricted action space.*'vocabulary'/);
  });
  it('name the bad field', () => {
    expect(() => resolveConfig({ gamma: 1.5 })).toThrow(/config.gamma/);
    expect(() => resolveConfig({ bogus: 1 } as Partial<PpoConfig>)).toThrow(/config.bogus/);
    expect(() => resolveConfig({ algorithm: 'dqn' as 'poad' })).toThrow(PpoConfigError);
  });
  it('gradAccumulation must divide the minibatch size', async () => {
    const { trainer } = setup({ ...small, numMinibatches: 2, gradAccumulation: 3 });
    await expect(trainer.iterate()).rejects.toThrow(/gradAccumulation/);
  });
});
