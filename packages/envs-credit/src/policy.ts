import { CreditArgumentError } from './errors.js';
import { solveInPlace } from './linear.js';
import { type CreditMdp, discountOf, indexMdp, runningStates } from './mdp.js';
import { type LabelPolicy, readPolicy } from './policy-input.js';
import { resolveMdp } from './tasks.js';
import { type LabelValues, labelEntry, type StateValues } from './values.js';

/** Options of {@link policyAdvantages}. */
export interface PolicyAdvantagesOptions {
  /** The discount (default: the task's γ). */
  gamma?: number;
}

/** The exact values of a policy on a credit task. */
export interface PolicyValues {
  /** The environment id of the task. */
  readonly id: string;
  readonly gamma: number;
  /** π(a|s) as used: the given probabilities divided by their sum. */
  readonly policy: LabelValues;
  /** V^π(s) per state id (0 at terminal states). */
  readonly v: StateValues;
  /** Q^π(s, a) per state id and label. */
  readonly q: LabelValues;
  /** A^π(s, a) = Q^π(s, a) − V^π(s) per state id and label. */
  readonly advantage: LabelValues;
}

/**
 * Exact V^π, Q^π and A^π = Q^π − V^π of the policy `pi` on a credit task (a task name, a
 * registry id or a {@link CreditMdp}), for every state and label, reachable or not.
 *
 * The policy-evaluation equations V^π(s) = Σ_a π(a|s)·Σ_o P(o)·(r(o) + γ·V^π(s_o)) over the
 * running states (V^π = 0 at terminal states) are one linear system (I − γ·P_π)·V = r_π, solved
 * exactly by Gaussian elimination with partial pivoting (no iteration, no tolerance: the result
 * is exact up to floating-point rounding, about 1e-15 on these tasks). Then
 * Q^π(s, a) = Σ_o P(o)·(r(o) + γ·V^π(s_o)). With γ < 1 the system always has a solution; with
 * γ = 1 a policy that can loop forever has none, and that is an error naming the state.
 *
 * `pi(stateId, labels)` gives the probability of each label (an array in the labels' order or a
 * record by label); each state's probabilities must sum to 1 within 1e-5 and are divided by
 * their sum.
 */
export function policyAdvantages(
  task: string | CreditMdp,
  pi: LabelPolicy,
  options: PolicyAdvantagesOptions = {},
): PolicyValues {
  const mdp = resolveMdp(task, 'policyAdvantages(task)');
  const gamma = discountOf(mdp, options.gamma, 'policyAdvantages');
  const probs = readPolicy(mdp, pi, 'policyAdvantages(pi)');
  const v = evaluate(mdp, probs, gamma, 'policyAdvantages(pi)');
  const { index } = indexMdp(mdp, 'policyAdvantages(task)');
  const policy: Record<string, Record<string, number>> = {};
  const vOut: Record<string, number> = {};
  const q: Record<string, Record<string, number>> = {};
  const advantage: Record<string, Record<string, number>> = {};
  mdp.states.forEach((st, s) => {
    vOut[st.id] = v[s]!;
    const ps: Record<string, number> = {};
    const qs: Record<string, number> = {};
    const as: Record<string, number> = {};
    st.actions.forEach((act, a) => {
      let value = 0;
      for (const o of act.outcomes) value += o.prob * (o.reward + gamma * v[index.get(o.state)!]!);
      ps[act.label] = probs[s]![a]!;
      qs[act.label] = value;
      as[act.label] = value - v[s]!;
    });
    policy[st.id] = ps;
    q[st.id] = qs;
    advantage[st.id] = as;
  });
  return { id: mdp.id, gamma, policy, v: vOut, q, advantage };
}

/**
 * V^π of every state (0 at terminal states): the solution of (I − γ·P_π)·V = r_π over the
 * running states. `argument` names the policy in the error thrown when the system is singular.
 */
export function evaluate(
  mdp: CreditMdp,
  probs: readonly Float64Array[],
  gamma: number,
  argument: string,
): Float64Array {
  const { index } = indexMdp(mdp, argument);
  const { running, row } = runningStates(mdp);
  const n = running.length;
  const a = new Float64Array(n * n);
  const b = new Float64Array(n);
  running.forEach((s, i) => {
    a[i * n + i] = 1;
    mdp.states[s]!.actions.forEach((act, k) => {
      const p = probs[s]![k]!;
      if (p === 0) return;
      for (const o of act.outcomes) {
        b[i] = b[i]! + p * o.prob * o.reward;
        const j = row[index.get(o.state)!]!;
        if (j >= 0) a[i * n + j] = a[i * n + j]! - gamma * p * o.prob;
      }
    });
  });
  const bad = solveInPlace(a, b, n);
  if (bad >= 0) {
    throw new CreditArgumentError(
      argument,
      `the values of this policy are not defined with γ = ${gamma}: from state ${JSON.stringify(mdp.states[running[bad]!]!.id)} on (or a state it leads to) it never ends an episode. Give every loop a way out, or evaluate with γ < 1.`,
    );
  }
  const v = new Float64Array(mdp.states.length);
  running.forEach((s, i) => {
    v[s] = b[i]!;
  });
  return v;
}

/**
 * A^π(s, a) of one step, looked up in `values`: what a learner compares its advantage of the
 * chosen label with. Throws a {@link CreditArgumentError} naming the valid states or labels
 * when `stateId` or `label` is not in the task.
 */
export function advantageOf(values: PolicyValues, stateId: string, label: string): number {
  return labelEntry(values.advantage, values.id, 'advantageOf', stateId, label);
}
