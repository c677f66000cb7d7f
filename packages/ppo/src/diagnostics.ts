/** What one call of `ppoUpdate` did, averaged over its minibatches (CleanRL's names in brackets). */
export interface UpdateDiagnostics {
  /** Clipped surrogate, masked mean over real tokens (or actions), without the entropy term [pg_loss]. */
  policyLoss: number;
  /** Clipped critic loss including `valueLossCoef` [v_loss]. */
  valueLoss: number;
  /** Mean entropy: full-vocabulary per token, or candidate-set for twosome [entropy]. */
  entropy: number;
  /** Mean of (ρ − 1) − log ρ over real tokens [approx_kl]. */
  approxKl: number;
  /** Fraction of real tokens whose ratio left [1 − ε, 1 + ε] [clipfrac]. */
  clipFraction: number;
  /** 1 − Var(R − V_old) / Var(R) over the rollout's real tokens (NaN when Var(R) = 0). */
  explainedVariance: number;
  /** Mean actor gradient L2 norm before clipping. */
  actorGradNorm: number;
  /** Mean critic gradient L2 norm before clipping. */
  criticGradNorm: number;
  /** Minibatches evaluated (epochs × numMinibatches). */
  minibatches: number;
  /** Minibatches whose actor step was skipped because approx KL exceeded `targetKl`. */
  skippedMinibatches: number;
  /**
   * Minibatches in which a step was skipped because a loss or gradient norm was NaN or ±∞ (the
   * critic's, the actor's or both; the other one still stepped if it was finite). The loss and
   * gradient-norm means above leave those values out.
   */
  nonFiniteSkips: number;
  /**
   * Consecutive minibatches with a non-finite skip at the end of this update, continuing the
   * count it was given (`nonFiniteStreak` of the arguments).
   */
  nonFiniteStreak: number;
  /** Actor optimiser steps taken: minibatches less the KL and the non-finite skips of the actor. */
  actorSteps: number;
  /** Wall-clock seconds of the update. */
  seconds: number;
  /** Action tokens processed per second by the update (all epochs). */
  tokensPerSec: number;
}

/** 1 − Var(y − ŷ) / Var(y) (population variances); NaN when Var(y) = 0 or y is empty. */
export function explainedVariance(yTrue: ArrayLike<number>, yPred: ArrayLike<number>): number {
  const n = yTrue.length;
  if (n === 0) return Number.NaN;
  let mt = 0;
  let md = 0;
  for (let i = 0; i < n; i++) {
    mt += yTrue[i]!;
    md += yTrue[i]! - yPred[i]!;
  }
  mt /= n;
  md /= n;
  let vt = 0;
  let vd = 0;
  for (let i = 0; i < n; i++) {
    vt += (yTrue[i]! - mt) ** 2;
    vd += (yTrue[i]! - yPred[i]! - md) ** 2;
  }
  return vt === 0 ? Number.NaN : 1 - vd / vt;
}

/**
 * What the update of every trainer family reports beside its losses, by {@link UpdateDiagnostics}'
 * names: the actor's gradient norm, the minibatches, the non-finite skips and streak, the actor's
 * steps and the update's time and throughput.
 */
export type UpdateStats = Pick<
  UpdateDiagnostics,
  | 'actorGradNorm'
  | 'minibatches'
  | 'nonFiniteSkips'
  | 'nonFiniteStreak'
  | 'actorSteps'
  | 'seconds'
  | 'tokensPerSec'
>;
