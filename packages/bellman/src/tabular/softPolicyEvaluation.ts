import { checkUnitInterval } from '../validate.js';
import type { ActionQTable } from './actionQIteration.js';
import { type IterationOptions, iterationLimits } from './options.js';
import type { ActionReference } from './softQIteration.js';
import { actionSweeps } from './sweeps.js';
import { buildTries, expectedNext, type TokenMdp } from './tokenMdp.js';

/** π(a|s): an action-level policy, the probability of action `action` in state `state`. */
export type ActionPolicy = (state: number, action: number) => number;

/** How far a state's policy probabilities may sum from 1 (they are then divided by their sum). */
const POLICY_SUM_TOLERANCE = 1e-6;
/** How far a state's reference probabilities may sum from 1 (as a product of token probabilities may). */
const REFERENCE_SUM_TOLERANCE = 1e-6;

/** Options of {@link softPolicyEvaluation}. */
export interface SoftEvaluationOptions extends IterationOptions {
  /** γ, the discount between actions. */
  gamma: number;
  /** β ≥ 0, the temperature of the KL term; 0 gives plain policy evaluation. */
  beta: number;
  /** The policy evaluated; each state's probabilities must sum to 1 (within 1e-6). */
  policy: ActionPolicy;
  /** π̄(a|s), the reference of the KL (summing to 1 within 1e-6); default uniform. */
  reference?: ActionReference;
}

/**
 * Soft (KL-regularised) policy evaluation at the action level: the values of a fixed policy π
 * under the regulariser that `softActionQIteration` optimises,
 *
 *   Q(s, a) = r(s, a) + γ·Σ_s' P(s'|s, a)·V(s')
 *   V(s)    = Σ_a π(a|s)·[Q(s, a) − β·log(π(a|s)/π̄(a|s))]  (0 at a terminal state)
 *
 * iterated to the fixed point (a γ-contraction; with γ = 1 it converges when π ends every
 * episode). Actions of probability 0 add nothing (0·log 0 = 0). With π the soft-optimal policy
 * π(a|s) = π̄(a|s)·exp((Q*(s, a) − V*(s))/β) the result is `softActionQIteration`'s; with β = 0
 * it is ordinary policy evaluation (Q^π, V^π). Returns `q[s][a]` and `v[s]` with how the
 * iteration ended.
 *
 * @throws RangeError for γ outside [0, 1], β < 0, a state whose policy probabilities are not a
 * distribution, or a reference probability of 0 for an action π takes (its KL is infinite).
 */
export function softPolicyEvaluation(mdp: TokenMdp, options: SoftEvaluationOptions): ActionQTable {
  const FN = 'softPolicyEvaluation';
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${FN}: \`options\` must be an object like { gamma: 0.95, beta: 0.1, policy: (s, a) => … }`,
    );
  }
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const beta = options.beta;
  if (typeof beta !== 'number' || !(beta >= 0) || !Number.isFinite(beta)) {
    throw new RangeError(
      `${FN}: \`options.beta\` must be a finite number ≥ 0 (0 = no KL term), got ${String(beta)}`,
    );
  }
  if (typeof options.policy !== 'function') {
    throw new TypeError(
      `${FN}: \`options.policy\` must be a function (state, action) => probability`,
    );
  }
  const limits = iterationLimits(options);
  buildTries(mdp);
  const S = mdp.states.length;
  const probs: Float64Array[] = [];
  // −β·KL(π‖π̄)(s): the state's regulariser, fixed because π is.
  const bonus = new Float64Array(S);
  mdp.states.forEach((st, s) => {
    const n = st.actions.length;
    const p = new Float64Array(n);
    let total = 0;
    for (let a = 0; a < n; a++) {
      const x = options.policy(s, a);
      if (typeof x !== 'number' || !(x >= 0) || !Number.isFinite(x)) {
        throw new RangeError(
          `${FN}: \`options.policy(${s}, ${a})\` must be a finite probability ≥ 0, got ${String(x)}`,
        );
      }
      p[a] = x;
      total += x;
    }
    if (n > 0 && !(Math.abs(total - 1) <= POLICY_SUM_TOLERANCE)) {
      throw new RangeError(
        `${FN}: \`options.policy\` at state ${s} sums to ${total}; the probabilities of a state's actions must sum to 1`,
      );
    }
    for (let a = 0; a < n; a++) p[a] = p[a]! / total;
    probs.push(p);
    if (beta === 0 || n === 0) return;
    const ref = new Float64Array(n);
    let refTotal = 0;
    for (let a = 0; a < n; a++) {
      const x = options.reference ? options.reference(s, a) : 1 / n;
      if (typeof x !== 'number' || !(x >= 0 && x <= 1)) {
        throw new RangeError(
          `${FN}: reference probability ${String(x)} at state ${s}, action ${a} is outside [0, 1]`,
        );
      }
      ref[a] = x;
      refTotal += x;
    }
    if (Math.abs(refTotal - 1) > REFERENCE_SUM_TOLERANCE) {
      throw new RangeError(
        `${FN}: reference probabilities at state ${s} sum to ${refTotal}; they must sum to 1`,
      );
    }
    let kl = 0;
    for (let a = 0; a < n; a++) {
      if (p[a] === 0) continue;
      if (ref[a] === 0) {
        throw new RangeError(
          `${FN}: the policy takes action ${a} of state ${s} but the reference gives it probability 0, so KL(π‖π̄) is infinite; give the reference mass there or the policy none`,
        );
      }
      kl += p[a]! * Math.log(p[a]! / ref[a]!);
    }
    bonus[s] = -beta * kl;
  });
  const { q, v, iterations, residual, converged } = actionSweeps(mdp, gamma, limits, (s, qs) => {
    const p = probs[s]!;
    let value = bonus[s]!;
    for (let a = 0; a < qs.length; a++) if (p[a]! > 0) value += p[a]! * qs[a]!;
    return value;
  });
  // q was computed from the previous sweep's V; bring it level with the returned V.
  for (let s = 0; s < S; s++) {
    const actions = mdp.states[s]!.actions;
    for (let a = 0; a < actions.length; a++) {
      q[s]![a] = actions[a]!.reward + gamma * expectedNext(actions[a]!, v);
    }
  }
  return { q, v, iterations, residual, converged };
}
