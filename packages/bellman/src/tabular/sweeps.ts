import type { IterationReport } from './options.js';
import { bottomUpOrder, expectedNext, type TokenMdp, type TokenTrie } from './tokenMdp.js';

/** When a value iteration stops (see `iterationLimits`). */
interface Limits {
  tolerance: number;
  maxIterations: number;
}

/**
 * Action-level value iteration in Jacobi sweeps: each sweep sets
 * Q(s, a) = r(s, a) + γ·Σ_s' P(s'|s, a)·V(s') from the previous sweep's V, then
 * V(s) = `stateValue(s, Q(s, ·))` (0 at a state without actions), until the largest change of V
 * is at most `tolerance` or `maxIterations` sweeps have run. The backups differ only in
 * `stateValue`: the max (optimality), the soft max (KL-regularised optimality), or a fixed
 * policy's expectation (evaluation).
 */
export function actionSweeps(
  mdp: TokenMdp,
  gamma: number,
  { tolerance, maxIterations }: Limits,
  stateValue: (s: number, qs: Float64Array) => number,
): { q: Float64Array[]; v: Float64Array } & IterationReport {
  const S = mdp.states.length;
  const q = mdp.states.map((st) => new Float64Array(st.actions.length));
  let v = new Float64Array(S);
  let next = new Float64Array(S);
  let residual = Number.POSITIVE_INFINITY;
  let iterations = 0;
  while (iterations < maxIterations && residual > tolerance) {
    iterations++;
    residual = 0;
    for (let s = 0; s < S; s++) {
      const actions = mdp.states[s]!.actions;
      const qs = q[s]!;
      for (let a = 0; a < actions.length; a++) {
        qs[a] = actions[a]!.reward + gamma * expectedNext(actions[a]!, v);
      }
      next[s] = actions.length === 0 ? 0 : stateValue(s, qs);
      residual = Math.max(residual, Math.abs(next[s]! - v[s]!));
    }
    [v, next] = [next, v];
  }
  return { q, v, iterations, residual, converged: residual <= tolerance };
}

/**
 * Token-level value iteration on each state's token trie, in Jacobi sweeps (every state reads
 * the root values of the previous sweep). Bottom-up in each trie:
 * - an action's last token: Q = r(o, a) + γ·Σ P(o'|o, a)·V(o'), and the node's V is NaN (an
 *   action's end has no continuation inside this state);
 * - any other node: V = `nodeValue(s, q, children)` (0 at a root without children), and the Q of
 *   the token leading into it is `intraGamma`·V.
 * Stops when the largest change of a root value is at most `tolerance` or after `maxIterations`
 * sweeps. `q[s][0]` stays NaN (no token leads into the root).
 */
export function tokenSweeps(
  mdp: TokenMdp,
  tries: readonly TokenTrie[],
  gamma: number,
  intraGamma: number,
  { tolerance, maxIterations }: Limits,
  nodeValue: (s: number, qs: Float64Array, kids: readonly number[]) => number,
): { q: Float64Array[]; v: Float64Array[] } & IterationReport {
  const orders = tries.map(bottomUpOrder);
  const S = mdp.states.length;
  const q = tries.map((t) => new Float64Array(t.parent.length).fill(Number.NaN));
  const v = tries.map((t) => new Float64Array(t.parent.length));
  const root = new Float64Array(S);
  let residual = Number.POSITIVE_INFINITY;
  let iterations = 0;
  while (iterations < maxIterations && residual > tolerance) {
    iterations++;
    root.set(v.map((vs) => vs[0]!));
    residual = 0;
    for (let s = 0; s < S; s++) {
      const trie = tries[s]!;
      const actions = mdp.states[s]!.actions;
      const qs = q[s]!;
      const vs = v[s]!;
      for (const n of orders[s]!) {
        const kids = trie.children[n]!;
        if (kids.length === 0 && n !== 0) {
          const act = actions[trie.action[n]!]!;
          vs[n] = Number.NaN;
          qs[n] = act.reward + gamma * expectedNext(act, root);
          continue;
        }
        vs[n] = kids.length === 0 ? 0 : nodeValue(s, qs, kids);
        if (n !== 0) qs[n] = intraGamma * vs[n]!;
      }
      residual = Math.max(residual, Math.abs(vs[0]! - root[s]!));
    }
  }
  return { q, v, iterations, residual, converged: residual <= tolerance };
}
