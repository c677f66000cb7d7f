import type { TextStep } from '@poad/envs-core';

/**
 * The vectorised environment shape the trainer needs (satisfied by `VecEnv` of
 * `@poad/envs-core`): N environments stepped together with same-step auto-reset.
 *
 * When env i's episode ends at a step, the returned `TextStep` has that step's `reward`,
 * `terminated` and `truncated`, the NEW episode's `observation` and `actions`, and
 * `info.finalObservation` (the observation the episode ended on), which the trainer needs to
 * bootstrap truncated episodes. `info.episode` ({ discountedReturn, length, success? }) is
 * collected into the rollout statistics.
 */
export interface VecEnvLike {
  /** Number of environments N. */
  readonly size: number;
  /** Resets every environment. */
  reset(): Promise<TextStep[]>;
  /** Steps environment i with `actions[i]` and auto-resets finished ones. */
  step(actions: readonly string[]): Promise<TextStep[]>;
}
