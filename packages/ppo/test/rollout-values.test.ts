// The critic's values of a rollout stay on the device until the rollout ends and come back in one
// batch: the buffer holds the values the policy gives each step, and a rollout that fails half way
// leaves no tensor behind.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectRollout, resolveConfig, SeededRng } from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import { disposedAfterEach, rolloutFromReset } from './trainer-setup.js';

beforeAll(useCpu);

const task = keyTokenTask(3);
const live = disposedAfterEach();

/** A key-token environment whose `failAt`-th step throws. */
class FailingEnv extends KeyTokenVecEnv {
  calls = 0;
  constructor(private readonly failAt: number) {
    super(task, 4);
  }
  override async step(actions: readonly string[]) {
    this.calls += 1;
    if (this.calls === this.failAt) throw new Error('the environment broke');
    return super.step(actions);
  }
}

const config = resolveConfig({ numSteps: 5, numMinibatches: 2 });

describe('rollout values', () => {
  it("the buffer holds each step's values as the policy computes them", async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 3 });
    live.push(policy);
    const env = new KeyTokenVecEnv(task, 4);
    const { buffer } = await rolloutFromReset({ policy, env, config }, 2);
    expect(buffer.size).toBe(20);
    let checked = 0;
    for (let i = 0; i < buffer.size; i++) {
      const [a, b] = [buffer.actionOffsets[i]!, buffer.actionOffsets[i + 1]!];
      const [prompt, action] = [buffer.prompt(i), buffer.action(i)];
      const v = policy.tokenValues({ prompts: [prompt], actions: [action], width: b - a });
      const want = await v.data();
      v.dispose();
      expect(Array.from(buffer.values.subarray(a, b))).toEqual(Array.from(want));
      checked += b - a;
    }
    expect(checked).toBeGreaterThan(20);
    // Not all zeros: the array was filled from the device.
    expect(buffer.values.some((x) => x !== 0)).toBe(true);
  });

  it('a rollout that fails half way disposes the values it held', async () => {
    const policy = new TinyPolicy({ words: task.words, seed: 3 });
    live.push(policy);
    const env = new FailingEnv(3);
    const steps = await env.reset();
    const before = tf.memory().numTensors;
    await expect(
      collectRollout({ policy, env, steps, config, rng: new SeededRng(2) }),
    ).rejects.toThrow(/the environment broke/);
    expect(env.calls).toBe(3);
    expect(tf.memory().numTensors).toBe(before);
  });

  it("a policy that asks for it gets every step's values in one batch at the end, the same numbers", async () => {
    const rollout = async (atEnd: boolean) => {
      const policy = new TinyPolicy({ words: task.words, seed: 3 });
      live.push(policy);
      const calls: number[] = [];
      const tokenValues = policy.tokenValues.bind(policy);
      const prepared: number[] = [];
      const spy = Object.assign(policy, {
        valuesAtRolloutEnd: atEnd,
        tokenValues: (b: Parameters<typeof tokenValues>[0]) => {
          calls.push(b.prompts.length);
          return tokenValues(b);
        },
        prepareValues: async (p: readonly Int32Array[]) => {
          prepared.push(p.length);
        },
      });
      const env = new KeyTokenVecEnv(task, 4);
      const before = tf.memory().numTensors;
      const { buffer } = await rolloutFromReset({ policy: spy, env, config }, 2);
      expect(tf.memory().numTensors).toBe(before);
      return { buffer, calls, prepared };
    };
    const perStep = await rollout(false);
    const atEnd = await rollout(true);
    // Five steps, then the bootstrap's V(o_T) (this policy's promptValues calls tokenValues).
    expect(perStep.calls).toEqual([4, 4, 4, 4, 4, 4]);
    expect(perStep.prepared).toEqual([4, 4, 4, 4, 4, 4]);
    // One batch of the 5 steps' 20 rows, then the bootstrap's.
    expect(atEnd.calls).toEqual([20, 4]);
    expect(atEnd.prepared).toEqual([20, 4]);
    expect(Array.from(atEnd.buffer.values)).toEqual(Array.from(perStep.buffer.values));
    expect(Array.from(atEnd.buffer.bootstrapValues)).toEqual(
      Array.from(perStep.buffer.bootstrapValues),
    );
    // The same actions were taken: the values are of the same rows.
    expect(Array.from(atEnd.buffer.actionIds)).toEqual(Array.from(perStep.buffer.actionIds));
    expect(atEnd.buffer.values.some((x) => x !== 0)).toBe(true);
  });
});
