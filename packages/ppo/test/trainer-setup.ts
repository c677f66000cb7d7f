// What the trainer tests build the same way: the list of things a test made, disposed after
// it, a short PPO configuration, a PpoTrainer with its tiny policy on the key-token task, and a
// rollout from a fresh reset.
import { afterEach } from 'vitest';
import {
  type CollectRolloutArgs,
  collectRollout,
  type PpoConfig,
  PpoTrainer,
  type RolloutResult,
  SeededRng,
} from '../src/index.js';
import { type KeyTokenTask, KeyTokenVecEnv } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';

export interface Disposable {
  dispose(): void;
}

/**
 * A list whose contents are disposed after each test of the file, in the order pushed. Call it
 * at the top of the file, where vitest registers the hook.
 */
export function disposedAfterEach(): Disposable[] {
  const live: Disposable[] = [];
  afterEach(() => {
    for (const x of live.splice(0)) x.dispose();
  });
  return live;
}

/** Four steps of four environments, two epochs of two minibatches, no KL stop. */
export const SMALL: Partial<PpoConfig> = {
  numSteps: 4,
  epochs: 2,
  numMinibatches: 2,
  lr: 3e-3,
  criticLr: 1e-2,
  targetKl: 0,
};

/**
 * A PpoTrainer on four copies of `task` with a TinyPolicy seeded `policySeed`; both are pushed
 * onto `live` when given.
 */
export function keyTokenTrainer(
  task: KeyTokenTask,
  config: Partial<PpoConfig>,
  policySeed: number,
  live?: Disposable[],
): { policy: TinyPolicy; trainer: PpoTrainer } {
  const policy = new TinyPolicy({ words: task.words, seed: policySeed });
  const trainer = new PpoTrainer({ policy, env: new KeyTokenVecEnv(task, 4), config });
  live?.push(policy, trainer);
  return { policy, trainer };
}

/** `collectRollout` from a fresh `env.reset()`, its choices drawn from `new SeededRng(seed)`. */
export async function rolloutFromReset(
  o: Pick<CollectRolloutArgs, 'policy' | 'env' | 'config' | 'alsoValuedBy'>,
  seed: number,
): Promise<RolloutResult> {
  return collectRollout({ ...o, steps: await o.env.reset(), rng: new SeededRng(seed) });
}
