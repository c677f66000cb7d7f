import type { ActionGaeOptions, ActionSegment, GaeResult } from './types.js';
import { checkActionSegment, checkUnitInterval } from './validate.js';

const FN = 'actionGae';

/**
 * Action-level GAE (TWOSOME, or any PPO with one value per action):
 * δ_t = r_t + γ·m·V(o_{t+1}) − V(o_t),  g ← δ_t + γ·λ·m·g,  A_t = g,  R_t = g + V(o_t),
 * where m = 0 if the episode ended after action t.
 */
export function actionGae(
  segment: ActionSegment,
  options: ActionGaeOptions,
  out?: GaeResult,
): GaeResult {
  if (segment === null || typeof segment !== 'object') {
    throw new TypeError(
      `${FN}: \`segment\` must be an object with rewards, dones, values and bootstrapValue`,
    );
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${FN}: \`options\` must be an object like { gamma: 0.95, lambda: 0.95 }`);
  }
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const lambda = checkUnitInterval(FN, 'options.lambda', options.lambda);
  const { rewards, dones, values, bootstrapValue } = checkActionSegment(FN, segment);
  const T = rewards.length;
  const advantages = out?.advantages ?? new Float64Array(T);
  const returns = out?.returns ?? new Float64Array(T);
  if (advantages.length < T || returns.length < T) {
    throw new RangeError(`${FN}: \`out\` arrays must hold at least ${T} entries`);
  }
  let g = 0;
  let vNext = bootstrapValue;
  for (let t = T - 1; t >= 0; t--) {
    const m = dones[t] ? 0 : 1;
    const v = values[t] as number;
    g = (rewards[t] as number) + gamma * m * vNext - v + gamma * lambda * m * g;
    advantages[t] = g;
    returns[t] = g + v;
    vNext = v;
  }
  return { advantages, returns };
}
