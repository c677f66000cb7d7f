import type { SoftBadOptions, TokenSegment } from './types.js';
import { checkSegmentObject, checkTokenSegment, checkUnitInterval } from './validate.js';

const FN = 'softBad';

/**
 * Per-token soft-BAD targets: the soft (KL-regularised) Bellman backup with Action
 * Decomposition, paper eq. 21, the per-token backup ETPO trains its critic with.
 *
 * Here `segment.values[k]` is the *soft* value at token k's position,
 * V(o_t, w^{<k}) = E_{w∼π}[Q̄(o_t, w^{<k}, w)] − β·KL(π‖π̄)(·|o_t, w^{<k}),
 * computed from a (target) critic Q̄, the policy π and the reference π̄; `bootstrapValue` is the
 * same quantity at the first token of the observation after the last action. The target for
 * Q(o_t, w^{1:j−1}, w^j), the soft Q of the j-th token of action t (flat index k), is
 * - inner token (j < |a_t|): y_k = V(o_t, w^{1:j}) = `values[k + 1]`
 * - last token  (j = |a_t|): y_k = r_t + γ·(1 − done_t)·V(o_{t+1}), where V(o_{t+1}) is the next
 *   action's first value, or `bootstrapValue` after the segment's last action.
 *
 * No reward and no discount inside an action; the KL terms of later tokens (and of the next
 * action's first token, inside γ·(…)) reach each target through the soft values, so β does not
 * appear here. Summed along an action, y_k − `values[k]` telescopes to r_t + γ·V(o_{t+1}) − V(o_t):
 * with exact soft values the token targets reproduce the action-level soft backup
 * Q(o_t, a_t) = r_t + γ·E[V(o_{t+1})] with the product reference π̄(a|o) = Π_j π̄(w^j|o, w^{1:j−1}).
 *
 * Returns one target per token, flat like `segment.values`. Pass `out` (at least Σ tokenCounts
 * long) to write into a preallocated array.
 */
export function softBad(
  segment: TokenSegment,
  options: SoftBadOptions,
  out?: Float64Array,
): Float64Array {
  checkSegmentObject(FN, segment);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${FN}: \`options\` must be an object like { gamma: 0.95 }`);
  }
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const { rewards, dones, counts, values, bootstrapValue, total } = checkTokenSegment(FN, segment);
  let targets: Float64Array;
  if (out === undefined) {
    targets = new Float64Array(total);
  } else {
    if (!(out instanceof Float64Array)) {
      throw new TypeError(
        `${FN}: \`out\` must be a Float64Array, e.g. new Float64Array(${total}) (Σ tokenCounts)`,
      );
    }
    if (out.length < total) {
      throw new RangeError(
        `${FN}: \`out\` has length ${out.length} but must hold at least ${total} entries (Σ tokenCounts)`,
      );
    }
    targets = out;
  }
  softBadKernel(rewards, dones, counts, values, bootstrapValue, gamma, targets);
  return targets;
}

/**
 * The unchecked backup. Inputs are assumed valid; writes the Σ tokenCounts targets starting at
 * index 0 of `targets`.
 */
export function softBadKernel(
  rewards: ArrayLike<number>,
  dones: ArrayLike<boolean | number>,
  counts: ArrayLike<number>,
  values: ArrayLike<number>,
  bootstrapValue: number,
  gamma: number,
  targets: Float64Array,
): void {
  const T = counts.length;
  let start = 0;
  for (let t = 0; t < T; t++) {
    const end = start + (counts[t] as number);
    // Inner tokens: the soft value after the token, no reward, no discount.
    for (let k = start; k < end - 1; k++) targets[k] = values[k + 1] as number;
    // Last token: the reward, plus the discounted soft value of the next observation unless the
    // episode ended (then the next value belongs to a reset observation and is not read).
    const r = rewards[t] as number;
    if (dones[t]) {
      targets[end - 1] = r;
    } else {
      const next = t + 1 < T ? (values[end] as number) : bootstrapValue;
      targets[end - 1] = r + gamma * next;
    }
    start = end;
  }
}
