import * as tf from '@tensorflow/tfjs-core';
import type { AlternateCritic } from './collect-rollout.js';
import { PpoConfigError } from './errors.js';

/**
 * A target critic (the paper's Eq. 15): a copy of the critic's weights that the returns the
 * critic regresses on are computed from, refreshed on a schedule rather than at every step.
 *
 * It works with any policy: its weights are variables of the same shapes as
 * `policy.criticVariables`, and {@link within} puts them in the critic's place for the duration
 * of a value computation (the rollout's), then puts the critic's own back, the same tensors, so
 * that nothing the critic holds changes. A refresh moves the copy towards the critic:
 * θ̄ ← τ·θ + (1 − τ)·θ̄ (τ = 1: an exact copy).
 */
export class TargetCritic implements AlternateCritic {
  /** The copy's weights, in the order of the critic's (what a checkpoint keeps). */
  readonly variables: tf.Variable[];

  constructor(
    /** The critic's variables (`policy.criticVariables`). */
    private readonly online: readonly tf.Variable[],
  ) {
    // A variable made from another shares its (immutable) data until either is assigned.
    this.variables = online.map((v) => tf.variable(v, false));
  }

  /**
   * Moves the copy towards the critic: θ̄ ← τ·θ + (1 − τ)·θ̄, an exact copy with τ = 1.
   * @throws PpoConfigError for τ outside (0, 1].
   */
  refresh(tau = 1): void {
    if (!(tau > 0 && tau <= 1)) {
      throw new PpoConfigError(
        'config.targetCriticTau',
        `expected a number in (0, 1], got ${tau}.`,
      );
    }
    this.variables.forEach((t, i) => {
      const o = this.online[i]!;
      if (tau === 1) t.assign(o);
      else tf.tidy(() => t.assign(tf.add(tf.mul(o, tau), tf.mul(t, 1 - tau))));
    });
  }

  /**
   * Runs `f` with the copy's weights in the critic's variables, then restores the critic's own
   * (the very tensors it had, so bit for bit), also when `f` throws. Nothing else may use the
   * critic while `f` runs.
   */
  async within<T>(f: () => Promise<T>): Promise<T> {
    const saved = this.online.map((v) => tf.clone(v));
    this.online.forEach((v, i) => {
      v.assign(this.variables[i]!);
    });
    try {
      return await f();
    } finally {
      this.online.forEach((v, i) => {
        v.assign(saved[i]!);
      });
      tf.dispose(saved);
    }
  }

  /** Frees the copy's variables. */
  dispose(): void {
    for (const v of this.variables) v.dispose();
  }
}
