import { CreditArgumentError } from './errors.js';
import { solveInPlace } from './linear.js';
import { type CreditMdp, indexMdp, runningStates } from './mdp.js';
import { evaluate } from './policy.js';
import { type LabelPolicy, readPolicy } from './policy-input.js';
import { resolveMdp } from './tasks.js';
import type { LabelValues, StateValues } from './values.js';

/** What outcome-only credit gives each label of a credit task, in expectation. */
export interface OutcomeCredit {
  /** The environment id of the task. */
  readonly id: string;
  /** E[R]: the mean undiscounted return of an episode under the policy. */
  readonly meanReturn: number;
  /** Expected steps taken in each state per episode (0 at terminal states and where π never goes). */
  readonly visits: StateValues;
  /**
   * E[R | an occurrence of (s, a)] − E[R] per state id and label: the mean of the advantage
   * R − E[R] that every step of an episode receives, over the steps that took label a in
   * state s. NaN for a state the policy never visits.
   */
  readonly credit: LabelValues;
}

/**
 * The credit an outcome-only method gives each (state, label) in expectation under the policy
 * `pi`: every step of an episode receives the episode's return minus the mean return, as RLOO
 * and Dr. GRPO (`grpoAdvantages` with `normalise: 'none'`) compute it, and this is its mean over
 * the steps that took label a in state s. R is the episode's undiscounted sum of rewards, as those
 * methods use it; the step limit is ignored (episodes run until they end).
 *
 * Computed exactly, with d(s) the expected visits to s, m(s) the expected reward collected
 * before those visits (summed over them) and U(s) the undiscounted value of π:
 * credit(s, a) = m(s)/d(s) + Σ_o P(o)·(r(o) + U(s_o)) − U(start), from three linear systems in
 * I − P_π. A policy that can loop forever has no such value, and that is an error naming the
 * state. Compare with `policyAdvantages`, the true credit: each task sets a case where the two
 * disagree (see the README).
 */
export function outcomeCredit(task: string | CreditMdp, pi: LabelPolicy): OutcomeCredit {
  const argument = 'outcomeCredit(pi)';
  const mdp = resolveMdp(task, 'outcomeCredit(task)');
  const { index } = indexMdp(mdp, 'outcomeCredit(task)');
  const probs = readPolicy(mdp, pi, argument);
  const u = evaluate(mdp, probs, 1, argument);

  const { running, row } = runningStates(mdp);
  const n = running.length;
  // (I − P_π)ᵀ, the matrix of the forward (occupancy) equations.
  const forward = new Float64Array(n * n);
  for (let i = 0; i < n; i++) forward[i * n + i] = 1;
  running.forEach((s, i) => {
    mdp.states[s]!.actions.forEach((act, k) => {
      for (const o of act.outcomes) {
        const j = row[index.get(o.state)!]!;
        if (j >= 0) forward[j * n + i] = forward[j * n + i]! - probs[s]![k]! * o.prob;
      }
    });
  });
  const solve = (rhs: Float64Array): Float64Array => {
    if (solveInPlace(Float64Array.from(forward), rhs, n) >= 0) {
      // (I − P_π) was invertible for U, so its transpose is too; this is a safeguard.
      throw new CreditArgumentError(argument, 'the occupancy equations have no solution.');
    }
    return rhs;
  };
  const startRow = row[index.get(mdp.start)!]!;
  const visits = new Float64Array(n);
  if (startRow >= 0) visits[startRow] = 1;
  solve(visits);
  // c(s') = Σ_s d(s)·Σ_a π(a|s)·Σ_{o → s'} P(o)·r(o): reward on the steps that enter s'.
  const before = new Float64Array(n);
  running.forEach((s, i) => {
    mdp.states[s]!.actions.forEach((act, k) => {
      for (const o of act.outcomes) {
        const j = row[index.get(o.state)!]!;
        if (j >= 0) before[j] = before[j]! + visits[i]! * probs[s]![k]! * o.prob * o.reward;
      }
    });
  });
  solve(before);

  const meanReturn = u[index.get(mdp.start)!]!;
  const visitsOut: Record<string, number> = {};
  const credit: Record<string, Record<string, number>> = {};
  mdp.states.forEach((st, s) => {
    const i = row[s]!;
    const d = i >= 0 ? visits[i]! : 0;
    visitsOut[st.id] = Math.max(0, d);
    const past = d > 1e-12 ? before[i]! / d : Number.NaN;
    const cs: Record<string, number> = {};
    for (const act of st.actions) {
      let after = 0;
      for (const o of act.outcomes) after += o.prob * (o.reward + u[index.get(o.state)!]!);
      cs[act.label] = past + after - meanReturn;
    }
    credit[st.id] = cs;
  });
  return { id: mdp.id, meanReturn, visits: visitsOut, credit };
}
