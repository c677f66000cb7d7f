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
  options: {
    /**
     * Learner advantages within this distance of each other count as tied (rounded to this grid
     * before ranking); default 0, none. A learner's float32 arithmetic leaves advantages that are
     * exactly equal in its own math (an oracle critic's, where A^π is 0) apart by about 1e-8,
     * which an exact ranking would order by its rounding.
     */
    readonly tieGrid?: number;
  } = {},
): CreditAccuracy {
  const mdp = resolveMdp(task, 'creditAccuracy(task)');
  if (!Array.isArray(steps)) {
    throw new CreditArgumentError(
      'creditAccuracy(steps)',
      'expected an array of { state, label, advantage }.',
    );
  }
  const grid = options.tieGrid ?? 0;
  if (!(grid >= 0 && Number.isFinite(grid)))
    throw new CreditArgumentError(
      'creditAccuracy(options.tieGrid)',
      `expected a finite number ≥ 0, got ${String(options.tieGrid)}.`,
    );
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
    given[i] = grid > 0 ? Math.round(s.advantage / grid) * grid : s.advantage;
  });
  return { spearman: spearman(given, exact), steps: steps.length, exact };
}
