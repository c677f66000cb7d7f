import { EnvArgumentError } from './errors.js';

function checkGamma(gamma: number, argument: string): void {
  if (!(gamma >= 0 && gamma <= 1)) {
    throw new EnvArgumentError(argument, `expected a discount in [0, 1], got ${String(gamma)}.`);
  }
}

/** Σ_t gamma^(t-1) · r_t over `rewards` (t = 1 for the first reward). */
export function discountedReturn(rewards: readonly number[], gamma: number): number {
  checkGamma(gamma, 'discountedReturn(gamma)');
  let total = 0;
  let scale = 1;
  for (const r of rewards) {
    total += scale * r;
    scale *= gamma;
  }
  return total;
}

/**
 * Accumulates an episode's discounted return one reward at a time, the way environments log
 * `info.discountedReturn`: after rewards r_1..r_T, `value` = Σ gamma^(t-1) · r_t and `length` = T.
 */
export class ReturnTracker {
  private total = 0;
  private scale = 1;
  private count = 0;

  constructor(readonly gamma: number) {
    checkGamma(gamma, 'ReturnTracker(gamma)');
  }

  /** Adds the reward of the next step. */
  add(reward: number): void {
    this.total += this.scale * reward;
    this.scale *= this.gamma;
    this.count += 1;
  }

  /** The discounted return so far. */
  get value(): number {
    return this.total;
  }

  /** Number of rewards added since the last reset. */
  get length(): number {
    return this.count;
  }

  /** Starts a new episode. */
  reset(): void {
    this.total = 0;
    this.scale = 1;
    this.count = 0;
  }
}
