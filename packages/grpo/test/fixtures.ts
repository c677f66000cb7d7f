// The test fixtures of `@poad/ppo` (its tiny word-level policy and the key-token task), shared
// rather than written twice, and small TextEnvs for group rollouts.
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { TextEnv, TextStep } from '@poad/envs-core';
import * as tf from '@tensorflow/tfjs-core';
import { type KeyTokenTask, keyTokenStart, keyTokenTask } from '../../ppo/test/key-token-env.js';
import { TinyPolicy } from '../../ppo/test/tiny-policy.js';

export { type KeyTokenTask, keyTokenTask, TinyPolicy };

/** Tests run on the pure-JS CPU backend. */
export async function useCpu(): Promise<void> {
  await tf.setBackend('cpu');
  await tf.ready();
}

/** The key-token task as a one-step `TextEnv`: reward 1 for the candidate with the right key. */
export class KeyTokenEnv implements TextEnv {
  readonly id = 'test/key-token';
  constructor(private readonly task: KeyTokenTask) {}
  async reset(): Promise<TextStep> {
    return keyTokenStart(this.task);
  }
  async step(action: string): Promise<TextStep> {
    const reward = action === this.task.candidates[this.task.correct] ? 1 : 0;
    return {
      observation: this.task.prompt,
      actions: [],
      reward,
      terminated: true,
      truncated: false,
      info: { discountedReturn: reward, length: 1, success: reward > 0 },
    };
  }
  async close(): Promise<void> {}
}

/**
 * A seeded two-step walk: the start room (`room r`, r = seed mod 3) decides which of `f0 k0` and
 * `f0 k1` pays; a step limit of `limit` (default 2) truncates; `info.state` names the room and step.
 */
export class RoomEnv implements TextEnv {
  readonly id = 'test/rooms';
  private room = 0;
  private t = 0;
  constructor(private readonly limit = 2) {}
  private view(reward: number, done: boolean): TextStep {
    const truncated = !done && this.t >= this.limit;
    return {
      observation: `f0 room ${this.room} step ${this.t}`,
      actions: done || truncated ? [] : ['f0 k0', 'f0 k1'],
      reward,
      terminated: done,
      truncated,
      info: { state: `room ${this.room} step ${this.t}` },
    };
  }
  async reset(options?: { seed?: number }): Promise<TextStep> {
    this.room = (options?.seed ?? 0) % 3;
    this.t = 0;
    return this.view(0, false);
  }
  async step(action: string): Promise<TextStep> {
    this.t += 1;
    const good = action === (this.room % 2 === 0 ? 'f0 k0' : 'f0 k1');
    return this.view(good ? 1 : 0, good && this.t >= 2);
  }
  async close(): Promise<void> {}
}

/** The words both fixtures use, for the tiny policy's vocabulary. */
export const WORDS = [
  ...keyTokenTask(4).words,
  'room',
  'step',
  ...Array.from({ length: 4 }, (_, i) => String(i)),
];
