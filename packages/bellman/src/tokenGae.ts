import type { GaeResult, TokenGaeOptions, TokenSegment } from './types.js';
import { checkSegmentObject, checkTokenSegment, checkUnitInterval } from './validate.js';

const FN = 'tokenGae';

/**
 * Token-level GAE over the Bellman backup with Action Decomposition (BAD).
 *
 * Walking backwards over actions t and, inside each action, over its tokens k:
 * - last token:  δ = r_t + γ·m·V_next − V(k),   g ← δ + γ·λ·m·g   (m = 0 if the episode ended after t)
 * - inner token: δ = γ_w·V(k+1) − V(k),         g ← δ + γ_w·λ_w·g   (λ_w = λ unless `intraLambda`)
 *
 * The reward enters only at an action's last token. With γ_w = 1 (the default) this is POAD's
 * BAD backup, which keeps the action-level optimum; γ_w = γ is NTPO; `bootstrap:
 * 'next-last-token'` together with γ_w = γ is the ARCHER variant.
 *
 * Returns advantages and returns (= advantages + values), both flat like `segment.values`.
 * Pass `out` to write into preallocated arrays (each at least Σ tokenCounts long).
 */
export function tokenGae(
  segment: TokenSegment,
  options: TokenGaeOptions,
  out?: GaeResult,
): GaeResult {
  checkSegmentObject(FN, segment);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${FN}: \`options\` must be an object like { gamma: 0.95, lambda: 0.95 }`);
  }
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const lambda = checkUnitInterval(FN, 'options.lambda', options.lambda);
  const intraGamma =
    options.intraGamma === undefined
      ? 1
      : checkUnitInterval(FN, 'options.intraGamma', options.intraGamma);
  const intraLambda =
    options.intraLambda === undefined
      ? lambda
      : checkUnitInterval(FN, 'options.intraLambda', options.intraLambda);
  const mode = options.bootstrap ?? 'next-first-token';
  if (mode !== 'next-first-token' && mode !== 'next-last-token') {
    throw new TypeError(
      `${FN}: \`options.bootstrap\` must be 'next-first-token' or 'next-last-token', got ${String(mode)}`,
    );
  }
  const { rewards, dones, counts, values, bootstrapValue, total } = checkTokenSegment(FN, segment);

  let advantages: Float64Array;
  let returns: Float64Array;
  if (out) {
    if (!(out.advantages instanceof Float64Array) || !(out.returns instanceof Float64Array)) {
      throw new TypeError(`${FN}: \`out.advantages\` and \`out.returns\` must be Float64Arrays`);
    }
    if (out.advantages.length < total || out.returns.length < total) {
      throw new RangeError(
        `${FN}: \`out\` arrays must hold at least ${total} entries (Σ tokenCounts)`,
      );
    }
    advantages = out.advantages;
    returns = out.returns;
  } else {
    advantages = new Float64Array(total);
    returns = new Float64Array(total);
  }
  tokenGaeKernel(
    rewards,
    dones,
    counts,
    values,
    bootstrapValue,
    gamma,
    lambda,
    intraGamma,
    mode === 'next-last-token',
    intraLambda,
    advantages,
    returns,
  );
  return { advantages, returns };
}

/**
 * The unchecked recursion. Inputs are assumed valid; writes advantages and returns for the
 * Σ tokenCounts tokens starting at index 0 of the output arrays.
 */
export function tokenGaeKernel(
  rewards: ArrayLike<number>,
  dones: ArrayLike<boolean | number>,
  counts: ArrayLike<number>,
  values: ArrayLike<number>,
  bootstrapValue: number,
  gamma: number,
  lambda: number,
  intraGamma: number,
  nextLast: boolean,
  intraLambda: number,
  advantages: Float64Array,
  returns: Float64Array,
): void {
  let end = 0;
  for (let t = 0; t < counts.length; t++) end += counts[t] as number;
  const innerDecay = intraGamma * intraLambda;
  const outerDecay = gamma * lambda;
  let g = 0;
  // Value the last token of the next action reads: V(o_{t+1}) or ARCHER's next-last-token value.
  let vNext = bootstrapValue;
  for (let t = counts.length - 1; t >= 0; t--) {
    const start = end - (counts[t] as number);
    const m = dones[t] ? 0 : 1;
    // Last token of the action: the reward and the next state's value enter here.
    let k = end - 1;
    let v = values[k] as number;
    g = (rewards[t] as number) + gamma * m * vNext - v + outerDecay * m * g;
    advantages[k] = g;
    returns[k] = g + v;
    const lastValue = v;
    // Inner tokens: pure bootstrap from the value after the token, discounted by γ_w.
    for (k = end - 2; k >= start; k--) {
      const vAfter = v;
      v = values[k] as number;
      g = intraGamma * vAfter - v + innerDecay * g;
      advantages[k] = g;
      returns[k] = g + v;
    }
    vNext = nextLast ? lastValue : v;
    end = start;
  }
}
