import type * as tf from '@tensorflow/tfjs-core';
import type { Adam } from './adam.js';
import type { Advantages } from './advantages.js';
import type { PpoConfig } from './config.js';
import { PolicyContractError } from './errors.js';
import type { TokenPolicy } from './policy.js';
import type { SeededRng } from './rng.js';
import type { RolloutBuffer } from './rollout-buffer.js';

/** Inputs of `ppoUpdate`. */
export interface PpoUpdateArgs {
  /** The policy being trained. */
  readonly policy: TokenPolicy;
  /** The rollout to learn from. */
  readonly buffer: RolloutBuffer;
  /** Its advantages and returns (`computeAdvantages`). */
  readonly advantages: Advantages;
  /** Trainer configuration. */
  readonly config: PpoConfig;
  /** Seeded generator for the minibatch permutations. */
  readonly rng: SeededRng;
  /** AdamW over `policy.actorVariables`. */
  readonly actorOptimizer: Adam;
  /** Adam over `policy.criticVariables`. */
  readonly criticOptimizer: Adam;
  /**
   * Consecutive minibatches skipped for non-finite values just before this update (default 0;
   * pass the previous update's `nonFiniteStreak` to count across updates).
   */
  readonly nonFiniteStreak?: number;
  /**
   * Whether the actor learns in this update (default true). False (`criticWarmup`): only the
   * critic steps; the actor's losses are evaluated, without gradients, for the diagnostics.
   */
  readonly actorLearns?: boolean;
}

/**
 * The logged sums of the chunks of one minibatch (token- or action-weighted), one scalar per
 * chunk in chunk order, kept on the device until the minibatch's single read. The critic's
 * closures fill only `pg`, with the value-loss sums.
 */
export interface LoggedSums {
  pg: tf.Scalar[];
  entropy: tf.Scalar[];
  kl: tf.Scalar[];
  clipped: tf.Scalar[];
}

/**
 * A chunk's loss. It pushes its logged sums onto `logged` as kept scalars (`tf.keep`, so they
 * outlive the gradient computation); whoever passes `logged` disposes them.
 */
export type LossFn = (logged: LoggedSums) => tf.Scalar;

/** The loss closures of one minibatch. */
export interface MinibatchLosses {
  /** Per-chunk critic losses (their `sums.pg` collects the value-loss sum). */
  valueFns: LossFn[];
  /** Per-chunk actor losses. */
  policyFns: LossFn[];
  /** Real tokens (token level) or actions (twosome) in the minibatch. */
  denominator: number;
  /** Action tokens processed. */
  tokens: number;
}

/** Throws a `PolicyContractError` unless `t` has exactly `shape`. */
export function checkShape(t: tf.Tensor, shape: readonly number[], method: string): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new PolicyContractError(method, `expected shape [${shape}], got [${t.shape}].`);
  }
}
