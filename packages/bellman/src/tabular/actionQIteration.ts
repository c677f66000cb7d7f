import { checkUnitInterval } from '../validate.js';
import { type IterationOptions, type IterationReport, iterationLimits } from './options.js';
import { buildTries, expectedNext, type TokenMdp } from './tokenMdp.js';

/** Action-level optimal values: q[s][a] = Q*(s, a), v[s] = max_a Q*(s, a). */
export interface ActionQTable extends IterationReport {
  q: Float64Array[];
  v: Float64Array;
}

/**
 * Value iteration for the action-level Bellman optimality backup (paper eq. 4):
 * Q(s, a) ← r(s, a) + γ·Σ_s' P(s'|s, a)·max_a' Q(s', a').
 */
export function actionQIteration(
  mdp: TokenMdp,
  options: { gamma: number } & IterationOptions,
): ActionQTable {
  const gamma = checkUnitInterval('actionQIteration', 'options.gamma', options.gamma);
  const { tolerance, maxIterations } = iterationLimits(options);
  buildTries(mdp);
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
      let best = actions.length === 0 ? 0 : Number.NEGATIVE_INFINITY;
      for (let a = 0; a < actions.length; a++) {
        const act = actions[a]!;
        qs[a] = act.reward + gamma * expectedNext(act, v);
        if (qs[a]! > best) best = qs[a]!;
      }
      next[s] = best;
      residual = Math.max(residual, Math.abs(best - v[s]!));
    }
    [v, next] = [next, v];
  }
  return { q, v, iterations, residual, converged: residual <= tolerance };
}
