// The critic's options on webgpu against wasm, on the tiny model: one PPO update of the same
// rollout with each critic (its own LoRA adapter, every layer's features, the actor's features
// with the critic's gradient reaching the actor, the unclipped value loss and extra critic epochs)
// gives the same losses and weights within 1e-4; a target critic's values (its weights swapped in
// and out) agree too, and the swap leaves the critic's weights as they were, bit for bit. Runs
// where Dawn finds an adapter (lavapipe will do); under CI it must find one.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { expectGpuUnderCi, startWebGpuForTests } from '@poad/dev-kit';
import { makeVecEnv } from '@poad/envs-core';
import { loadCausalLM } from '@poad/lora-model';
import {
  Adam,
  collectRollout,
  computeAdvantages,
  type PpoConfig,
  ppoUpdate,
  type RolloutBuffer,
  resolveConfig,
  SeededRng,
  TargetCritic,
} from '@poad/ppo';
import { initBackend, releaseBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { poad } from '../src/algorithms/ppo.js';
import { DoorEnv } from './door-env.js';
import { tinyModelDir } from './tiny-model.js';

vi.setConfig({ testTimeout: 300_000 });

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

describe('webgpu backend', () => {
  it('is available where CI provides a software Vulkan (no silent fallback)', () => {
    expectGpuUnderCi(gpu, 'critic option webgpu tests');
  });
});

let dir = '';
beforeAll(async () => {
  dir = await tinyModelDir();
});

/** Relative-to-scale max difference (scale at least 1) below `tol`. */
function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number, what: string): void {
  expect(a.length, what).toBe(b.length);
  let scale = 1;
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    scale = Math.max(scale, Math.abs(a[i]!));
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
  }
  expect(diff / scale, what).toBeLessThan(tol);
}

/** The policy `config` asks for on a fresh tiny model (same seeds on every backend). */
async function policyOn(backend: 'wasm' | 'webgpu', config: PpoConfig) {
  await initBackend(backend, backend === 'webgpu' ? { allowSoftwareAdapter: true } : {});
  expect(tf.getBackend()).toBe(backend);
  const model = await loadCausalLM(dir, {
    seed: 7,
    lora: { r: 4, alpha: 8 },
    valueHead: { hiddenSizes: [16, 8] },
  });
  const built = poad.createPolicy(model, model.tokenizer!, config, {});
  // Non-zero B in every adapter, so that each moves the features it is on.
  const adapters = [
    ...model.policyVariables(),
    ...Object.values(built.adapters).flatMap((a) => a.variables()),
  ];
  adapters.forEach((v, i) => {
    v.assign(tf.tidy(() => tf.add(v, tf.randomNormal(v.shape, 0, 0.05, 'float32', 11 + i))));
  });
  const dispose = () => {
    for (const a of Object.values(built.adapters)) a.dispose();
    model.dispose();
  };
  return { policy: built.policy, dispose };
}

/** A rollout of the door task collected once, on wasm with the default critic. */
async function rolloutOnce(config: PpoConfig): Promise<RolloutBuffer> {
  const { policy, dispose } = await policyOn('wasm', config);
  const env = makeVecEnv(() => new DoorEnv(), 4, { seed: 1 });
  const { buffer } = await collectRollout({
    policy,
    env,
    steps: await env.reset(),
    config,
    rng: new SeededRng(1),
  });
  await env.close();
  dispose();
  return buffer;
}

/** The variables' numbers, read asynchronously (webgpu in Node cannot read synchronously). */
async function read(vars: readonly tf.Variable[]): Promise<number[]> {
  const data = await Promise.all(vars.map((v) => v.data()));
  return data.flatMap((d) => Array.from(d as Float32Array));
}

describe.runIf(gpu.ok)('webgpu = wasm with the critic options', () => {
  const base: Partial<PpoConfig> = {
    numSteps: 2,
    epochs: 1,
    numMinibatches: 2,
    targetKl: 0,
    lr: 1e-3,
    criticLr: 1e-3,
    seed: 7,
  };
  const cases: [string, Partial<PpoConfig>][] = [
    ['criticAdapter lora', { criticAdapter: 'lora' }],
    ["criticFeatures 'layers', criticEpochs 2", { criticFeatures: 'layers', criticEpochs: 2 }],
    [
      "criticFeatures 'actor', criticGradToActor, valueClip off",
      { criticFeatures: 'actor', criticGradToActor: true, valueClip: false },
    ],
  ];
  let buffer: RolloutBuffer;
  beforeAll(async () => {
    buffer = await rolloutOnce(resolveConfig(base));
  });

  for (const [name, over] of cases) {
    it(`${name}: one update of the same rollout, losses and weights within 1e-4`, async () => {
      const config = resolveConfig({ ...base, ...over });
      const advantages = computeAdvantages(buffer, config);
      const results = [];
      for (const backend of ['wasm', 'webgpu'] as const) {
        const { policy, dispose } = await policyOn(backend, config);
        const critic0 = await read(policy.criticVariables);
        const actorOptimizer = new Adam(policy.actorVariables, { lr: config.lr, eps: 1e-5 });
        const criticOptimizer = new Adam(policy.criticVariables, {
          lr: config.criticLr,
          eps: 1e-5,
        });
        const prompts = Array.from({ length: buffer.size }, (_, i) => buffer.prompt(i));
        const actions = Array.from({ length: buffer.size }, (_, i) => buffer.action(i));
        await policy.prepareValues?.(prompts, actions);
        const d = await ppoUpdate({
          policy,
          buffer,
          advantages,
          config,
          rng: new SeededRng(5),
          actorOptimizer,
          criticOptimizer,
        });
        const critic = await read(policy.criticVariables);
        results.push({
          losses: [d.valueLoss, d.policyLoss, d.criticGradNorm, d.actorGradNorm],
          critic,
          actor: await read(policy.actorVariables),
          moved: critic.some((x, i) => x !== critic0[i]),
          steps: criticOptimizer.stepCount,
        });
        actorOptimizer.dispose();
        criticOptimizer.dispose();
        dispose();
      }
      const [w, g] = results as [(typeof results)[0], (typeof results)[0]];
      expect(w.moved && g.moved).toBe(true);
      expect(g.steps).toBe(w.steps);
      close(g.losses, w.losses, 1e-4, 'losses and gradient norms');
      close(g.critic, w.critic, 1e-4, 'critic weights');
      close(g.actor, w.actor, 1e-4, 'actor weights');
    });
  }

  it("a target critic's values, its weights swapped in and out: within 1e-4, and the critic bit for bit as it was", async () => {
    const config = resolveConfig({ ...base, criticAdapter: 'lora', targetCriticEvery: 1 });
    const prompts = Array.from({ length: buffer.size }, (_, i) => buffer.prompt(i));
    const actions = Array.from({ length: buffer.size }, (_, i) => buffer.action(i));
    const width = Math.max(...actions.map((a) => a.length));
    const results = [];
    for (const backend of ['wasm', 'webgpu'] as const) {
      const { policy, dispose } = await policyOn(backend, config);
      const target = new TargetCritic(policy.criticVariables);
      // The copy differs from the critic.
      target.variables.forEach((v, i) => {
        v.assign(tf.tidy(() => tf.add(v, tf.randomNormal(v.shape, 0, 0.05, 'float32', 40 + i))));
      });
      const before = await read(policy.criticVariables);
      const values = async () => {
        const t = tf.tidy(() => policy.tokenValues({ prompts, actions, width }));
        const out = Array.from(await t.data());
        t.dispose();
        return out;
      };
      const own = await values();
      const copy = await target.within(values);
      expect(await read(policy.criticVariables)).toEqual(before);
      results.push({ own, copy });
      target.dispose();
      dispose();
    }
    const [w, g] = results as [(typeof results)[0], (typeof results)[0]];
    expect(w.copy).not.toEqual(w.own);
    close(g.own, w.own, 1e-4, "the critic's values");
    close(g.copy, w.copy, 1e-4, "the copy's values");
  });
});
