import { groupNormaliseKernel } from './groupNormalise.js';
import type { GrpoOptions } from './types.js';
import { checkFiniteArray, checkGroupNormalisation, checkGroupSize } from './validate.js';

const FN = 'grpoAdvantages';
const CALL = `${FN}([1, 0, 0.5], { normalise: 'std' })`;

/**
 * Group-relative advantages of G episodes that started from the same state (GRPO, DeepSeekMath;
 * Dr. GRPO without the std division):
 * - `normalise: 'std'`:  A_i = (R_i − mean_j R_j) / (std_j R_j + ε)   (GRPO)
 * - `normalise: 'none'`: A_i = R_i − mean_j R_j                         (Dr. GRPO)
 *
 * where R_i is episode i's return (the undiscounted sum of its rewards), std is the population
 * standard deviation (divided by G, not G − 1) and ε = 1e-6.
 *
 * Conventions: a group whose returns are all equal — a group of one included — gets exactly 0
 * for every episode in both modes (no gradient); an empty group is an error. The advantages sum
 * to 0 up to rounding. Every token of episode i's actions gets A_i.
 */
export function grpoAdvantages(returns: ArrayLike<number>, options: GrpoOptions): Float64Array {
  const R = checkGroupSize(
    FN,
    'returns',
    returns,
    1,
    'a group needs at least one episode',
    CALL,
  ) as ArrayLike<number>;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${FN}: \`options\` must be an object like { normalise: 'std' }; e.g. ${CALL}`,
    );
  }
  const normalise = checkGroupNormalisation(FN, 'options.normalise', options.normalise, CALL);
  checkFiniteArray(FN, 'returns', R);
  const advantages = new Float64Array(R.length);
  groupNormaliseKernel(R, null, 1, normalise === 'std', advantages);
  return advantages;
}
