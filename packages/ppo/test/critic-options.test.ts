// The learned critic's options of the PPO family, each changing what it says and nothing else:
// criticWarmup, criticEpochs, valueClip, the target critic (targetCriticEvery, targetCriticTau)
// and criticGradToActor; each resumes from a checkpoint exactly as an uninterrupted run goes on.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  Adam,
  type Advantages,
  CheckpointMismatchError,
  computeAdvantages,
  type PpoConfig,
  PpoConfigError,
  PpoTrainer,
  ppoUpdate,
  resolveConfig,
  SeededRng,
  TargetCritic,
  type TokenBatch,
  type TokenPolicy,
  valueLoss,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { PPO_CHECKPOINT_FIELDS } from './checkpoint-fields.js';
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

const weights = (vars: readonly tf.Variable[]) => vars.map((v) => Array.from(v.dataSync()));

const setup = (config: Partial<PpoConfig>, seed = 1, policySeed = 7) =>
  keyTokenTrainer(task, { ...small, ...config, seed }, policySeed, live);

/** An iteration's report without its wall-clock fields. */
async function iterate(trainer: PpoTrainer) {
  const r = await trainer.iterate();
  const { seconds, tokensPerSec, ...u } = r.update;
  return { u, adv: Array.from(r.advantages.advantages), ret: Array.from(r.advantages.returns) };
}

describe('criticWarmup', () => {
  it('the first N iterations step the critic alone; their environment steps count; the actor starts after', async () => {
    const { policy, trainer } = setup({ criticWarmup: 2 });
    const actor0 = weights(policy.actorVariables);
    let critic = weights(policy.criticVariables);
    for (let i = 1; i <= 2; i++) {
      const r = await trainer.iterate();
      expect(weights(policy.actorVariables)).toEqual(actor0);
      expect(weights(policy.criticVariables)).not.toEqual(critic);
      critic = weights(policy.criticVariables);
      expect(r.update.actorSteps).toBe(0);
      expect(r.update.skippedMinibatches).toBe(0);
      // The actor's losses are still evaluated (the policy has not moved: no KL, no clipping).
      expect(Number.isFinite(r.update.policyLoss)).toBe(true);
      expect(Number.isFinite(r.update.entropy)).toBe(true);
      expect(r.update.approxKl).toBe(0);
      expect(r.update.clipFraction).toBe(0);
      expect(Number.isNaN(r.update.actorGradNorm)).toBe(true);
      expect(trainer.counters).toEqual({ iterations: i, envSteps: 16 * i, actorUpdates: 0 });
    }
    expect(trainer.actorOptimizer.stepCount).toBe(0);
    expect(trainer.criticOptimizer.stepCount).toBe(8);
    const r3 = await trainer.iterate();
    expect(r3.update.actorSteps).toBe(4);
    expect(weights(policy.actorVariables)).not.toEqual(actor0);
    expect(trainer.counters).toEqual({ iterations: 3, envSteps: 48, actorUpdates: 4 });
  });

  it("the critic's trajectory during warmup is the one it has with the actor learning (the actor does not touch it)", async () => {
    const warm = setup({ criticWarmup: 1 });
    const plain = setup({});
    await warm.trainer.iterate();
    await plain.trainer.iterate();
    expect(weights(warm.policy.criticVariables)).toEqual(weights(plain.policy.criticVariables));
    expect(weights(warm.policy.actorVariables)).not.toEqual(weights(plain.policy.actorVariables));
  });
});

describe('criticEpochs', () => {
  for (const [epochs, criticEpochs] of [
    [1, 3],
    [3, 1],
    [2, 2],
  ] as const) {
    it(`epochs ${epochs}, criticEpochs ${criticEpochs}: ${2 * criticEpochs} critic steps and ${2 * epochs} actor steps per update`, async () => {
      const { trainer } = setup({ epochs, criticEpochs });
      const r = await trainer.iterate();
      expect(trainer.criticOptimizer.stepCount).toBe(2 * criticEpochs);
      expect(trainer.actorOptimizer.stepCount).toBe(2 * epochs);
      expect(r.update.actorSteps).toBe(2 * epochs);
      expect(r.update.minibatches).toBe(2 * Math.max(epochs, criticEpochs));
    });
  }

  it('unset is epochs: the same run, bit for bit', async () => {
    const a = setup({ epochs: 2 });
    const b = setup({ epochs: 2, criticEpochs: 2 });
    for (let i = 0; i < 2; i++) expect(await iterate(b.trainer)).toEqual(await iterate(a.trainer));
    expect(weights(b.policy.criticVariables)).toEqual(weights(a.policy.criticVariables));
    expect(weights(b.policy.actorVariables)).toEqual(weights(a.policy.actorVariables));
  });
});

describe('valueClip', () => {
  it('off: the loss is the plain error of the new values (a hand case where the clip binds)', async () => {
    // v_old 0, v_new 1, R 2, ε 0.2: clipped max(½·1.8², ½·1²) = 1.62; plain ½·1² = 0.5.
    // v_new −1 under R 2: clipped max(½·2.2², ½·3²) = 4.5 either way.
    const vNew = tf.tensor1d([1, -1]);
    const vOld = tf.tensor1d([0, 0]);
    const ret = tf.tensor1d([2, 2]);
    const clipped = valueLoss(vNew, vOld, ret, 0.2, 'mse', 10);
    const plain = valueLoss(vNew, vOld, ret, null, 'mse', 10);
    const huber = valueLoss(vNew, vOld, ret, null, 'huber', 0.5);
    const c = Array.from(await clipped.data());
    expect(c[0]).toBeCloseTo(1.62, 6);
    expect(c[1]).toBe(4.5);
    expect(Array.from(await plain.data())).toEqual([0.5, 4.5]);
    // Huber with δ 0.5 on errors 1 and 3: δ·(|e| − δ/2).
    expect(Array.from(await huber.data())).toEqual([0.375, 1.375]);
    tf.dispose([vNew, vOld, ret, clipped, plain, huber]);
  });

  it('off changes the critic and nothing of the actor', async () => {
    for (const algorithm of ['poad', 'twosome'] as const) {
      // A tight clip, so that it binds in the second epoch.
      const on = setup({ algorithm, clip: 0.01 });
      const off = setup({ algorithm, clip: 0.01, valueClip: false });
      const a = await iterate(on.trainer);
      const b = await iterate(off.trainer);
      expect(b.u.valueLoss).not.toBe(a.u.valueLoss);
      expect(b.u.policyLoss).toBe(a.u.policyLoss);
      expect(weights(off.policy.actorVariables)).toEqual(weights(on.policy.actorVariables));
      expect(weights(off.policy.criticVariables)).not.toEqual(weights(on.policy.criticVariables));
    }
  });
});

describe('target critic', () => {
  it('a rollout values every row with the other weights too, and changes nothing else', async () => {
    const words = [...task.words, 'k1', 'f1'];
    const policy = new TinyPolicy({ words, seed: 3 });
    live.push(policy);
    const target = new TargetCritic(policy.criticVariables);
    live.push(target);
    // The copy's weights differ from the critic's.
    for (const v of target.variables)
      v.assign(tf.tidy(() => tf.add(v, tf.randomNormal(v.shape, 0, 0.3, 'float32', 2))));
    const config = resolveConfig({ numSteps: 3 });
    const run = (alsoValuedBy?: TargetCritic) =>
      rolloutFromReset(
        {
          policy,
          env: new TruncatingVecEnv(2, 2),
          config,
          ...(alsoValuedBy ? { alsoValuedBy } : {}),
        },
        1,
      );
    const critic0 = weights(policy.criticVariables);
    const plain = await run();
    const both = await run(target);
    expect(plain.targetValues).toBeUndefined();
    // The buffer is the same with and without the second critic, and the critic is back.
    expect(both.buffer).toEqual(plain.buffer);
    expect(weights(policy.criticVariables)).toEqual(critic0);
    // The second critic's values are those of the policy with its weights in place.
    const saved = policy.criticVariables.map((v) => tf.clone(v));
    policy.criticVariables.forEach((v, i) => {
      v.assign(target.variables[i]!);
    });
    const underTarget = await run();
    policy.criticVariables.forEach((v, i) => {
      v.assign(saved[i]!);
    });
    tf.dispose(saved);
    const t = both.targetValues!;
    expect(Array.from(t.values)).toEqual(Array.from(underTarget.buffer.values));
    expect(Array.from(t.bootstrapValues)).toEqual(Array.from(underTarget.buffer.bootstrapValues));
    expect(Array.from(t.finalValues)).toEqual(Array.from(underTarget.buffer.finalValues));
    // Truncated steps have final values (the comparison covers them) and the critics differ.
    expect(Array.from(t.finalValues).filter(Number.isFinite).length).toBe(2);
    expect(Array.from(t.values)).not.toEqual(Array.from(both.buffer.values));
  });

  it('refresh moves the copy by τ: θ̄ ← τ·θ + (1 − τ)·θ̄, a copy at τ = 1', async () => {
    const online: tf.Variable[] = [
      tf.variable(tf.tensor1d([1, 2, 3])),
      tf.variable(tf.tensor2d([[4]])),
    ];
    const target = new TargetCritic(online);
    live.push(target, { dispose: () => tf.dispose(online) });
    online[0]!.assign(tf.tensor1d([5, 6, 7]));
    online[1]!.assign(tf.tensor2d([[0]]));
    expect(weights(target.variables)).toEqual([[1, 2, 3], [4]]);
    target.refresh(0.25);
    expect(weights(target.variables)).toEqual([[2, 3, 4], [3]]);
    target.refresh(1);
    expect(weights(target.variables)).toEqual([[5, 6, 7], [0]]);
    expect(() => target.refresh(0)).toThrow(PpoConfigError);
  });

  it('the returns come from the copy, the advantages from the critic; the copy is refreshed after every N-th update', async () => {
    const { policy, trainer } = setup({ targetCriticEvery: 2 });
    const copy = trainer.targetCritic!;
    const critic0 = weights(policy.criticVariables);
    expect(weights(copy.variables)).toEqual(critic0);
    const snapshots: number[][][] = [];
    for (let i = 1; i <= 4; i++) {
      const before = weights(copy.variables);
      const r = await trainer.iterate();
      const online = computeAdvantages(r.buffer, trainer.config);
      expect(Array.from(r.advantages.advantages)).toEqual(Array.from(online.advantages));
      // Refreshed after updates 2 and 4 only, to the critic as it is then.
      const after = weights(copy.variables);
      if (i % 2 === 0) expect(after).toEqual(weights(policy.criticVariables));
      else expect(after).toEqual(before);
      snapshots.push(after);
      // Rollouts 1 and 3 come right after a refresh (or the start): the copy is the critic. Before
      // rollouts 2 and 4 the critic learned once more: the returns differ from its own.
      if (i % 2 === 0) {
        expect(Array.from(r.advantages.returns)).not.toEqual(Array.from(online.returns));
      } else {
        expect(Array.from(r.advantages.returns)).toEqual(Array.from(online.returns));
      }
    }
    expect(snapshots[1]).not.toEqual(critic0);
  });

  it('the trainer moves the copy by targetCriticTau after each scheduled update', async () => {
    const { policy, trainer } = setup({ targetCriticEvery: 1, targetCriticTau: 0.25 });
    const critic0 = weights(policy.criticVariables);
    await trainer.iterate();
    const critic1 = weights(policy.criticVariables);
    const got = weights(trainer.targetCritic!.variables);
    critic1.forEach((v, i) => {
      v.forEach((x, j) => {
        expect(got[i]![j]).toBeCloseTo(0.25 * x + 0.75 * critic0[i]![j]!, 6);
      });
    });
    expect(got).not.toEqual(critic1);
  });

  it('the returns equal those computed from the values of the policy with the copy in place', async () => {
    const { policy, trainer } = setup({ targetCriticEvery: 3 });
    await trainer.iterate();
    // Before iteration 2 the copy is still the initial critic, which the critic has left.
    const copy = trainer.targetCritic!;
    const r = await trainer.iterate();
    const b = r.buffer;
    const prompts = Array.from({ length: b.size }, (_, i) => b.prompt(i));
    const actions = Array.from({ length: b.size }, (_, i) => b.action(i));
    const width = Math.max(...actions.map((a) => a.length));
    const values = await copy.within(async () =>
      tf.tidy(() => policy.tokenValues({ prompts, actions, width }).dataSync()),
    );
    const boot = await copy.within(async () =>
      tf.tidy(() => policy.promptValues([policy.encode(task.prompt)]).dataSync()[0]!),
    );
    const flat = new Float32Array(b.tokenCount);
    for (let i = 0; i < b.size; i++)
      for (let k = 0; k < b.actionLength(i); k++)
        flat[b.actionOffsets[i]! + k] = values[i * width + k]!;
    const expected = computeAdvantages(b, trainer.config, {
      values: flat,
      finalValues: b.finalValues,
      bootstrapValues: new Float64Array(4).fill(boot),
    });
    const got = Array.from(r.advantages.returns);
    Array.from(expected.returns).forEach((x, k) => {
      expect(got[k]).toBeCloseTo(x, 5);
    });
  });

  it('is in the checkpoint only when on; a checkpoint without it is refused by a run with it', async () => {
    const off = setup({});
    const on = setup({ targetCriticEvery: 1 });
    const offState = await off.trainer.getState();
    const onState = await on.trainer.getState();
    expect('targetWeights' in offState).toBe(false);
    expect(Object.keys(offState)).toEqual(PPO_CHECKPOINT_FIELDS);
    expect(onState.targetWeights?.length).toBe(policyCriticCount(on.policy));
    expect(() => on.trainer.setState(offState)).toThrow(CheckpointMismatchError);
    expect(() => on.trainer.setState(offState)).toThrow(/no targetWeights/);
  });
});

const policyCriticCount = (p: TinyPolicy) => p.criticVariables.length;

/**
 * A policy whose values read the actor's variables too: V = the tiny critic's value + the mean of
 * the actor's first embedding row (as a value head on the actor's features depends on them).
 */
function valueOnActor(inner: TinyPolicy): TokenPolicy {
  const fromActor = (n: number) =>
    tf.mul(tf.mean(tf.slice(inner.actorVariables[0]!, [1, 0], [1, -1])), tf.ones([n]));
  return {
    encodePrompt: (o) => inner.encodePrompt(o),
    encodeContinuations: (o, c) => inner.encodeContinuations(o, c),
    scoreTokens: (batch) => inner.scoreTokens(batch),
    tokenValues: (batch: TokenBatch) => {
      const v = inner.tokenValues(batch);
      return tf.add(v, tf.reshape(fromActor(v.size), v.shape)) as tf.Tensor2D;
    },
    promptValues: (p) => tf.add(inner.promptValues(p), fromActor(p.length)) as tf.Tensor1D,
    actorVariables: inner.actorVariables,
    criticVariables: inner.criticVariables,
  };
}

describe('criticGradToActor', () => {
  it("adds the critic's gradient to the actor's, and only with the option", async () => {
    const inner = new TinyPolicy({ words: task.words, seed: 4 });
    live.push(inner);
    const policy = valueOnActor(inner);
    const config = resolveConfig({
      ...small,
      criticFeatures: 'actor',
      entropyCoef: 0,
      advantageNormalisation: 'none',
      // The critic steps first; a clipped loss could then give the actor no gradient at all.
      valueClip: false,
    });
    const { buffer } = await rolloutFromReset(
      { policy, env: new KeyTokenVecEnv(task, 4), config },
      1,
    );
    // Zero advantages and no entropy bonus: the policy loss has no gradient, so the actor moves
    // only by what the critic's loss gives it.
    const online = computeAdvantages(buffer, config);
    const advantages: Advantages = {
      level: 'token',
      advantages: new Float64Array(online.advantages.length),
      returns: online.returns,
    };
    const init = weights([...inner.actorVariables, ...inner.criticVariables]);
    const run = async (criticGradToActor: boolean) => {
      [...inner.actorVariables, ...inner.criticVariables].forEach((v, i) => {
        v.assign(tf.tensor(init[i]!, v.shape));
      });
      const actorOptimizer = new Adam(inner.actorVariables, { lr: 1e-3 });
      const criticOptimizer = new Adam(inner.criticVariables, { lr: 1e-2 });
      await ppoUpdate({
        policy,
        buffer,
        advantages,
        // One minibatch: the critic steps before the actor moves, so its step cannot differ.
        config: { ...config, epochs: 1, numMinibatches: 1, criticGradToActor },
        rng: new SeededRng(2),
        actorOptimizer,
        criticOptimizer,
      });
      actorOptimizer.dispose();
      criticOptimizer.dispose();
      return {
        actor: weights(inner.actorVariables),
        critic: weights(inner.criticVariables),
      };
    };
    const off = await run(false);
    const on = await run(true);
    const actor0 = init.slice(0, inner.actorVariables.length);
    expect(off.actor).toEqual(actor0);
    // With the option, only the embedding row the value reads moves (the others get no gradient).
    expect(on.actor[0]).not.toEqual(actor0[0]);
    expect(on.actor.slice(1)).toEqual(actor0.slice(1));
    const row = task.words.length + 1;
    expect(on.actor[0]!.slice(0, 8)).toEqual(actor0[0]!.slice(0, 8));
    expect(on.actor[0]!.slice(8, 16)).not.toEqual(actor0[0]!.slice(8, 16));
    expect(on.actor[0]!.slice(16, row * 8)).toEqual(actor0[0]!.slice(16, row * 8));
    // The critic's own step is the same either way.
    expect(on.critic).toEqual(off.critic);
  });
});

describe('configuration', () => {
  it('refuses the options that contradict each other, naming the field and the fix', () => {
    expect(() => resolveConfig({ criticAdapter: 'lora', criticFeatures: 'actor' })).toThrow(
      /config\.criticFeatures.*criticAdapter 'none'/,
    );
    expect(() => resolveConfig({ criticGradToActor: true })).toThrow(
      /config\.criticGradToActor.*Set criticFeatures 'actor'/,
    );
    expect(() => resolveConfig({ targetCriticTau: 0.5 })).toThrow(
      /config\.targetCriticTau.*targetCriticEvery/,
    );
    expect(() => resolveConfig({ criticEpochs: 0 })).toThrow(PpoConfigError);
    expect(() => resolveConfig({ criticLoraTargets: ['x_proj'] as never })).toThrow(PpoConfigError);
    const ok = resolveConfig({ criticFeatures: 'actor', criticGradToActor: true });
    expect(ok.criticGradToActor).toBe(true);
    const d = resolveConfig({});
    expect({
      criticAdapter: d.criticAdapter,
      criticLoraRank: d.criticLoraRank,
      criticLoraAlpha: d.criticLoraAlpha,
      criticLoraTargets: d.criticLoraTargets,
      criticFeatures: d.criticFeatures,
      criticGradToActor: d.criticGradToActor,
      targetCriticEvery: d.targetCriticEvery,
      targetCriticTau: d.targetCriticTau,
      criticWarmup: d.criticWarmup,
      criticEpochs: d.criticEpochs,
      valueClip: d.valueClip,
    }).toEqual({
      criticAdapter: 'none',
      criticLoraRank: 8,
      criticLoraAlpha: 16,
      criticLoraTargets: ['q_proj', 'v_proj'],
      criticFeatures: 'last',
      criticGradToActor: false,
      targetCriticEvery: 0,
      targetCriticTau: 1,
      criticWarmup: 0,
      criticEpochs: undefined,
      valueClip: true,
    });
  });
});

describe('exact resume', () => {
  const cases: [string, Partial<PpoConfig>][] = [
    ['criticWarmup (saved inside the warmup)', { criticWarmup: 2 }],
    ['criticEpochs', { epochs: 1, criticEpochs: 3 }],
    ['valueClip off', { valueClip: false, clip: 0.01 }],
    ['target critic, copy', { targetCriticEvery: 2 }],
    ['target critic, Polyak', { targetCriticEvery: 1, targetCriticTau: 0.3 }],
    ['twosome with a target critic', { algorithm: 'twosome', targetCriticEvery: 2 }],
  ];
  for (const [name, config] of cases) {
    it(`${name}: a run resumed from iteration 1 equals the uninterrupted run`, async () => {
      const a = setup(config, 4, 7);
      await a.trainer.iterate();
      const state = structuredClone(await a.trainer.getState());
      const straight = [await iterate(a.trainer), await iterate(a.trainer)];
      // The same frozen parts (policy seed), trained elsewhere first: everything differs until
      // the checkpoint is restored.
      const b = setup(config, 99, 7);
      await b.trainer.iterate();
      await b.trainer.iterate();
      b.trainer.setState(state);
      const resumed = [await iterate(b.trainer), await iterate(b.trainer)];
      expect(resumed).toEqual(straight);
      expect(weights(b.policy.actorVariables)).toEqual(weights(a.policy.actorVariables));
      expect(weights(b.policy.criticVariables)).toEqual(weights(a.policy.criticVariables));
      if (a.trainer.targetCritic) {
        expect(weights(b.trainer.targetCritic!.variables)).toEqual(
          weights(a.trainer.targetCritic.variables),
        );
      }
      expect(b.trainer.counters).toEqual(a.trainer.counters);
    });
  }
});

describe('memory', () => {
  it('no tensor leaks across iterations with every option on, and none after dispose', async () => {
    const { trainer } = setup({
      criticWarmup: 1,
      criticEpochs: 3,
      valueClip: false,
      targetCriticEvery: 1,
      targetCriticTau: 0.5,
    });
    await trainer.iterate();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await trainer.iterate();
    expect(tf.memory().numTensors).toBe(before);
    const second = new PpoTrainer({
      policy: trainer.policy,
      env: trainer.env,
      config: { ...small, targetCriticEvery: 2 },
    });
    expect(tf.memory().numTensors).toBeGreaterThan(before);
    second.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
