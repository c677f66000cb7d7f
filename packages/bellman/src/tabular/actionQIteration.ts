import { checkUnitInterval } from '../validate.js';
import { type IterationOptions, type IterationReport, iterationLimits } from './options.js';
import { actionSweeps } from './sweeps.js';
import { buildTries, type TokenMdp } from './tokenMdp.js';

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
  const limits = iterationLimits(options);
  buildTries(mdp);
  return actionSweeps(mdp, gamma, limits, (_, qs) => {
    let best = Number.NEGATIVE_INFINITY;
    for (const x of qs) if (x > best) best = x;
    return best;
  });
}
