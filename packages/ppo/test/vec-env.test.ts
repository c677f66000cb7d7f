import { type TextEnv, type TextStep, VecEnv } from '@poad/envs-core';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkpointFromJson, checkpointToJson, PpoTrainer, resolveConfig } from '../src/index.js';
import { useCpu } from './backend.js';
import { TinyPolicy } from './tiny-policy.js';
import { rolloutFromReset } from './trainer-setup.js';

beforeAll(useCpu);

const WORDS = ['step', 'f0', 'k0', 'k1', 'f1'];

/** A deterministic TextEnv: reward = 1 for 'f0 k1 f1', truncated after `limit` steps. */
function countingEnv(limit: number): TextEnv {
  let t = -1;
  const obs = (): TextStep => ({
    observation: Array.from({ length: t + 1 }, () => 'step').join(' '),
    actions: ['f0 k0', 'f0 k1 f1'],
    reward: 0,
    terminated: false,
    truncated: false,
    info: {},
  });
  return {
    id: 'test/counting',
    async reset() {
      t = 0;
      return obs();
    },
    async step(action: string) {
      t += 1;
      return { ...obs(), reward: action === 'f0 k1 f1' ? 1 : 0, truncated: t >= limit };
    },
    async close() {},
  };
}

describe('with the VecEnv of @poad/envs-core', () => {
  it('truncated steps are bootstrapped from V(info.finalObservation)', async () => {
    const policy = new TinyPolicy({ words: WORDS, seed: 1 });
    const env = new VecEnv([countingEnv(2), countingEnv(3)], { seed: 1 });
    const { buffer, stats } = await rolloutFromReset(
      { policy, env, config: resolveConfig({ numSteps: 3 }) },
      1,
    );
    // env 0 truncates at step 1 (sample 2), env 1 at step 2 (sample 5).
    expect(Array.from(buffer.truncated)).toEqual([0, 0, 1, 0, 0, 1]);
    const v = (o: string) => tf.tidy(() => policy.promptValues([policy.encode(o)]).dataSync()[0]!);
    expect(buffer.finalValues[2]).toBeCloseTo(v('step step step'), 6);
    expect(buffer.finalValues[5]).toBeCloseTo(v('step step step step'), 6);
    expect(stats.episodes.map((e) => e.env)).toEqual([0, 1]);
    policy.dispose();
  });

  it('trainer state (through JSON) + VecEnv.restore resume a run bit-exactly', async () => {
    const config = { numSteps: 3, numMinibatches: 2, epochs: 2, lr: 1e-2, criticLr: 1e-2 };
    const make = async (seed: number) => {
      const policy = new TinyPolicy({ words: WORDS, seed: 1 });
      const env = new VecEnv([countingEnv(4), countingEnv(5)], { seed: 3 });
      const trainer = new PpoTrainer({ policy, env, config: { ...config, seed } });
      return { policy, env, trainer };
    };
    const a = await make(1);
    await a.trainer.iterate();
    const saved = { trainer: checkpointToJson(await a.trainer.getState()), env: a.env.getState() };
    const next = await a.trainer.iterate();

    const b = await make(2);
    await b.trainer.iterate();
    b.trainer.setState(checkpointFromJson(saved.trainer));
    b.trainer.steps = await b.env.restore(saved.env);
    const resumed = await b.trainer.iterate();
    const strip = (r: typeof next) => {
      const { seconds, tokensPerSec, ...u } = r.update;
      return { u, reward: r.rollout.meanReward, actions: Array.from(r.buffer.actionIds) };
    };
    expect(strip(resumed)).toEqual(strip(next));
    const w = (p: TinyPolicy) =>
      [...p.actorVariables, ...p.criticVariables].map((x) => Array.from(x.dataSync()));
    expect(w(b.policy)).toEqual(w(a.policy));
    for (const x of [a, b]) {
      x.trainer.dispose();
      x.policy.dispose();
    }
  });
});

describe('checkpoint JSON', () => {
  it('rejects text that is not a checkpoint, naming the problem', () => {
    expect(() => checkpointFromJson('{')).toThrow(/not valid JSON/);
    expect(() => checkpointFromJson('{"format":"other"}')).toThrow(/format tag/);
    expect(() =>
      checkpointFromJson(
        '{"format":"poad-ppo-checkpoint","actorWeights":[{"shape":[1],"data":[1]}],"criticWeights":[]}',
      ),
    ).toThrow(/malformed/);
  });
});
