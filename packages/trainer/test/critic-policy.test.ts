// The PPO family's critic on a tiny language model, as `createPolicy` builds it from the config:
// the value head on the frozen base's final hidden states (the default), on every layer's
// ('layers'), through a LoRA adapter of its own (criticAdapter 'lora') or on the actor's features
// ('actor'), and PpoTrainer iterations with each.
import { makeVecEnv } from '@poad/envs-core';
import { featureRows, loadCausalLM } from '@poad/lora-model';
import { type PpoConfig, PpoTrainer, resolveConfig, type TokenBatch } from '@poad/ppo';
import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { PPO_CRITIC_ADAPTER_DIR, poad } from '../src/algorithms/ppo.js';
import { DoorEnv } from './door-env.js';
import { tinyModelDir } from './tiny-model.js';

let dir = '';
beforeAll(async () => {
  dir = await tinyModelDir();
  await initBackend('cpu');
});

const TEXT = 'You stand in a hall with a red door and a blue door. You';

/** The tiny model (2 layers, width 32) with an actor adapter and a head, and the entry's policy. */
async function built(over: Partial<PpoConfig>) {
  const model = await loadCausalLM(dir, {
    seed: 7,
    lora: { r: 4, alpha: 8 },
    valueHead: { hiddenSizes: [16, 8] },
  });
  const config = resolveConfig({ ...over, seed: 7 });
  const { policy, adapters } = poad.createPolicy(model, model.tokenizer!, config, {});
  const prompt = await policy.encodePrompt(TEXT);
  const [action] = await policy.encodeContinuations(TEXT, ['open the red door']);
  const batch: TokenBatch = { prompts: [prompt], actions: [action!], width: action!.length };
  const values = async () => {
    await policy.prepareValues?.(batch.prompts, batch.actions);
    return Array.from(tf.tidy(() => policy.tokenValues(batch).dataSync()));
  };
  /**
   * Norms of the gradients of Σ V² w.r.t. `vars` (0 where a variable gets none; all 0 where none
   * is connected to the values, which TF.js reports by throwing).
   */
  const gradNorms = async (vars: readonly tf.Variable[]) => {
    await policy.prepareValues?.(batch.prompts, batch.actions);
    let result: { value: tf.Scalar; grads: tf.NamedTensorMap };
    try {
      result = tf.variableGrads(
        () => tf.sum(tf.square(policy.tokenValues(batch))) as tf.Scalar,
        vars as tf.Variable[],
      );
    } catch (e) {
      if (/Cannot find a connection between any variable/.test(String(e))) return vars.map(() => 0);
      throw e;
    }
    const { value, grads } = result;
    const out = vars.map((v) =>
      grads[v.name] ? tf.tidy(() => tf.norm(grads[v.name]!).dataSync()[0]!) : 0,
    );
    tf.dispose([value, ...Object.values(grads).filter((g) => g)]);
    return out;
  };
  const done = () => {
    policy.dispose?.();
    for (const a of Object.values(adapters)) a.dispose();
    model.dispose();
  };
  return { model, policy, adapters, batch, values, gradNorms, done };
}

/** Non-zero B matrices, so that an adapter changes what it is applied to. */
function perturb(vars: readonly tf.Variable[], seed: number): void {
  vars.forEach((v, i) => {
    v.assign(tf.tidy(() => tf.add(v, tf.randomNormal(v.shape, 0, 0.3, 'float32', seed + i))));
  });
}

describe('the critic createPolicy builds from the PPO config', () => {
  it("defaults: the model's head on the frozen base's final hidden states, nothing else", async () => {
    const b = await built({});
    expect(b.adapters).toEqual({});
    expect(b.model.valueHead?.features).toBe('last');
    expect(b.model.valueHead?.sizes).toEqual([32, 16, 8, 1]);
    expect(b.policy.criticVariables).toEqual(b.model.valueVariables());
    const v0 = await b.values();
    // The actor's adapter does not touch these features.
    perturb(b.model.policyVariables(), 1);
    b.policy.clearFeatureCache();
    expect(await b.values()).toEqual(v0);
    b.done();
  });

  it("'layers': a head on numLayers × hidden features of the base, the same sizes otherwise", async () => {
    const b = await built({ criticFeatures: 'layers' });
    expect(b.model.valueHead?.features).toBe('layers');
    expect(b.model.valueHead?.sizes).toEqual([64, 16, 8, 1]);
    const v = await b.values();
    // The head on featureRows 'layers' of the frozen base, computed here on its own.
    const { prompts, actions } = b.batch;
    const p = prompts[0]!;
    const a = actions[0]!;
    const ids = Int32Array.from([...p, ...a]);
    const rows = Array.from(a, (_, k) => p.length - 1 + k);
    const expected = tf.tidy(() =>
      Array.from(
        b.model
          .values(featureRows(b.model, { ids, batch: 1, seq: ids.length }, rows, 'layers'))
          .dataSync(),
      ),
    );
    expect(v).toEqual(expected);
    b.done();
  });

  it("'lora': an adapter of the critic's own (rank, alpha, targets as configured), trained with the head", async () => {
    const b = await built({
      criticAdapter: 'lora',
      criticLoraRank: 2,
      criticLoraAlpha: 4,
      criticLoraTargets: ['q_proj', 'k_proj', 'v_proj'],
    });
    const critic = b.adapters[PPO_CRITIC_ADAPTER_DIR]!;
    expect(critic.config).toMatchObject({
      r: 2,
      alpha: 4,
      targetModules: ['q_proj', 'k_proj', 'v_proj'],
    });
    expect(critic).not.toBe(b.model.adapter);
    // Head first, then the adapter: 2 layers × 3 modules × (A, B).
    expect(b.policy.criticVariables).toEqual([...b.model.valueVariables(), ...critic.variables()]);
    expect(critic.variables()).toHaveLength(12);
    const base = await built({});
    // B starts at 0: the same values as the frozen base's until the adapter learns.
    expect(await b.values()).toEqual(await base.values());
    perturb(critic.variables(), 3);
    const moved = await b.values();
    expect(moved).not.toEqual(await base.values());
    // The actor's adapter does not change them; the gradient reaches the critic's adapter only.
    perturb(b.model.policyVariables(), 5);
    expect(await b.values()).toEqual(moved);
    const n = await b.gradNorms([...critic.variables(), ...b.model.policyVariables()]);
    expect(n.slice(0, 12).every((x) => x > 0)).toBe(true);
    expect(n.slice(12).every((x) => x === 0)).toBe(true);
    base.done();
    b.done();
  });

  it("'actor': the head reads the actor's adapted states, which move with it; the gradient can reach the actor", async () => {
    const b = await built({ criticFeatures: 'actor' });
    expect(b.policy.criticVariables).toEqual(b.model.valueVariables());
    const v0 = await b.values();
    perturb(b.model.policyVariables(), 2);
    const v1 = await b.values();
    expect(v1).not.toEqual(v0);
    const n = await b.gradNorms(b.model.policyVariables());
    expect(n.some((x) => x > 0)).toBe(true);
    // With the frozen base's features the same gradient is zero.
    const last = await built({});
    perturb(last.model.policyVariables(), 2);
    expect((await last.gradNorms(last.model.policyVariables())).every((x) => x === 0)).toBe(true);
    last.done();
    b.done();
  });
});

describe('PpoTrainer with each critic', () => {
  const cases: [string, Partial<PpoConfig>][] = [
    ['criticAdapter lora', { criticAdapter: 'lora' }],
    [
      "criticFeatures 'layers' and a target critic",
      { criticFeatures: 'layers', targetCriticEvery: 1 },
    ],
    [
      "criticFeatures 'actor', criticGradToActor",
      { criticFeatures: 'actor', criticGradToActor: true },
    ],
  ];
  for (const [name, over] of cases) {
    it(`${name}: the critic learns, the losses are finite, no tensor growth`, async () => {
      const b = await built({ ...over });
      const env = makeVecEnv(() => new DoorEnv(), 4, { seed: 1 });
      const trainer = new PpoTrainer({
        policy: b.policy,
        env,
        config: {
          ...over,
          numSteps: 2,
          epochs: 2,
          numMinibatches: 2,
          lr: 1e-3,
          criticLr: 1e-2,
          targetKl: 0,
          seed: 3,
        },
      });
      const critic0 = b.policy.criticVariables.map((v) => Array.from(v.dataSync()));
      const actor0 = b.policy.actorVariables.map((v) => Array.from(v.dataSync()));
      b.policy.clearFeatureCache();
      const first = await trainer.iterate();
      const live = tf.memory().numTensors;
      b.policy.clearFeatureCache();
      const second = await trainer.iterate();
      expect(tf.memory().numTensors).toBe(live);
      for (const r of [first, second]) {
        expect(Number.isFinite(r.update.valueLoss)).toBe(true);
        expect(Number.isFinite(r.update.policyLoss)).toBe(true);
        expect(r.update.actorSteps).toBe(4);
      }
      // Every critic variable moved (the adapter's B as well as the head).
      b.policy.criticVariables.forEach((v, i) => {
        expect(Array.from(v.dataSync()), `critic variable ${i}`).not.toEqual(critic0[i]);
      });
      expect(
        b.policy.actorVariables.some(
          (v, i) => String(Array.from(v.dataSync())) !== String(actor0[i]),
        ),
      ).toBe(true);
      trainer.dispose();
      await env.close();
      b.done();
    });
  }
});
