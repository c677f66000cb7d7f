import { CreditArgumentError } from './errors.js';
import type { CreditMdp } from './mdp.js';
import { advantageOf, policyAdvantages } from './policy.js';
import type { LabelPolicy } from './policy-input.js';
import { spearman } from './spearman.js';
import { resolveMdp } from './tasks.js';

/** One chosen action and the advantage a learner gave it. */
export interface CreditedStep {
  /** The state acted in (`info.state` of the step's observation). */
  readonly state: string;
  /** The label chosen there. */
  readonly label: string;
  /** The learner's advantage of that choice (for token-level methods, its first token's). */
  readonly advantage: number;
}

/** What {@link creditAccuracy} found. */
export interface CreditAccuracy {
  /**
   * Spearman's ρ between the learner's advantages and the exact A^π of the same steps; NaN when
   * fewer than two steps were given or either side is constant (e.g. every step took one label).
   */
  readonly spearman: number;
  /** The steps correlated. */
  readonly steps: number;
  /** The exact A^π of each step, in the order given. */
  readonly exact: Float64Array;
}

/**
 * Exact A^π values within this distance of each other count as tied: A^π = Q^π − V^π carries
 * rounding of about 1e-15, which must not rank two labels of equal value apart.
 */
const TIE_GRID = 1e-12;

/**
 * Credit accuracy of a learner on a credit task: how well the advantages it gave the actions it
 * chose rank those actions as their exact A^π under the policy `pi` that chose them does
 * (Spearman's ρ, ties averaged). 1: the learner orders its steps exactly as the true credit
 * does; 0: no relation; −1: reversed.
 */
export function creditAccuracy(
  task: string | CreditMdp,
  pi: LabelPolicy,
  steps: readonly CreditedStep[],
): CreditAccuracy {
  const mdp = resolveMdp(task, 'creditAccuracy(task)');
  if (!Array.isArray(steps)) {
    throw new CreditArgumentError(
      'creditAccuracy(steps)',
      'expected an array of { state, label, advantage }.',
    );
  }
  const values = policyAdvantages(mdp, pi);
  const exact = new Float64Array(steps.length);
  const given = new Float64Array(steps.length);
  steps.forEach((s, i) => {
    if (!Number.isFinite(s.advantage)) {
      throw new CreditArgumentError(
        `creditAccuracy(steps[${i}].advantage)`,
        `expected a finite number, got ${String(s.advantage)}.`,
      );
    }
    exact[i] = Math.round(advantageOf(values, s.state, s.label) / TIE_GRID) * TIE_GRID;
    given[i] = s.advantage;
  });
  return { spearman: spearman(given, exact), steps: steps.length, exact };
}
