import { actionQIteration } from '@poad/bellman';
import { type CreditMdp, discountOf } from './mdp.js';
import { resolveMdp } from './tasks.js';
import { creditTokenMdp } from './token-mdp.js';
import { type LabelValues, type StateValues, TIE_TOLERANCE } from './values.js';

/** Options of {@link optimalValues}. */
export interface OptimalValuesOptions {
  /** The discount (default: the task's γ). */
  gamma?: number;
  /** Stop value iteration when no state value changes by more than this (default 1e-13). */
  tolerance?: number;
}

/** Q* and V* of a credit task. */
export interface OptimalValues {
  /** The environment id of the task. */
  readonly id: string;
  readonly gamma: number;
  /** V*(s) per state id (0 at terminal states). */
  readonly v: StateValues;
  /** Q*(s, a) per state id and label (terminal states: no labels). */
  readonly q: LabelValues;
  /** The optimal labels of every running state (within 1e-9 of the best), in the state's order. */
  readonly optimal: Readonly<Record<string, readonly string[]>>;
  /** Sweeps of value iteration, and whether it reached the tolerance. */
  readonly iterations: number;
  readonly converged: boolean;
}

/**
 * Q*(s, a) and V*(s) of a credit task (a task name, a registry id or a {@link CreditMdp}), by
 * `@poad/bellman`'s `actionQIteration` on the task's MDP with one token per label:
 * Q*(s, a) = Σ_o P(o)·(r(o) + γ·V*(s_o)), V*(s) = max_a Q*(s, a), V* = 0 at terminal states.
 * Value iteration stops when a sweep changes no value by more than `tolerance`; the values are
 * then within tolerance·γ/(1 − γ) of the fixed point (≈ 2e-12 at γ = 0.95).
 */
export function optimalValues(
  task: string | CreditMdp,
  options: OptimalValuesOptions = {},
): OptimalValues {
  const mdp = resolveMdp(task, 'optimalValues(task)');
  const gamma = discountOf(mdp, options.gamma, 'optimalValues');
  const { tokenMdp } = creditTokenMdp(mdp);
  const table = actionQIteration(tokenMdp, { gamma, tolerance: options.tolerance ?? 1e-13 });
  const v: Record<string, number> = {};
  const q: Record<string, Record<string, number>> = {};
  const optimal: Record<string, string[]> = {};
  mdp.states.forEach((st, s) => {
    v[st.id] = table.v[s]!;
    const qs: Record<string, number> = {};
    st.actions.forEach((act, a) => {
      qs[act.label] = table.q[s]![a]!;
    });
    q[st.id] = qs;
    if (!st.terminal) {
      optimal[st.id] = st.actions
        .filter((_, a) => table.q[s]![a]! >= table.v[s]! - TIE_TOLERANCE)
        .map((act) => act.label);
    }
  });
  return {
    id: mdp.id,
    gamma,
    v,
    q,
    optimal,
    iterations: table.iterations,
    converged: table.converged,
  };
}

/**
 * The exact optimum of the logged return `info.discountedReturn` of a credit task: V* of its
 * start state. The optimal episodes of the eight tasks take no chance (the risky tasks' optimum
 * walks), so this is also the logged return of every optimal episode; for an MDP of your own
 * with chance on the optimal path it is the expected optimum.
 */
export function optimalReturn(task: string | CreditMdp): number {
  const mdp = resolveMdp(task, 'optimalReturn(task)');
  return optimalValues(mdp).v[mdp.start]!;
}
