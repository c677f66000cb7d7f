import { groupNormaliseKernel } from './groupNormalise.js';
import { checkFiniteArray, checkGroupSize } from './validate.js';

const FN = 'rlooAdvantages';
const CALL = `${FN}([1, 0, 0.5])`;

/**
 * REINFORCE leave-one-out advantages of G >= 2 episodes that started from the same state (RLOO,
 * Ahmadian et al. 2024): each episode's baseline is the mean return of the *other* episodes,
 *
 *   A_i = R_i − (1/(G−1))·Σ_{j≠i} R_j  =  G/(G−1)·(R_i − mean_j R_j),
 *
 * where R_i is episode i's return (the undiscounted sum of its rewards). It is computed through
 * the right-hand form: the advantages sum to 0 up to rounding, and equal returns give exactly 0.
 *
 * Conventions: no std division; a group of one has no other episode to form a baseline from, so
 * a group of fewer than 2 episodes is an error (a RangeError).
 */
export function rlooAdvantages(returns: ArrayLike<number>): Float64Array {
  const R = checkGroupSize(
    FN,
    'returns',
    returns,
    2,
    'the leave-one-out baseline of an episode is the mean return of the other episodes, so a group needs at least 2',
    CALL,
  ) as ArrayLike<number>;
  checkFiniteArray(FN, 'returns', R);
  const G = R.length;
  const advantages = new Float64Array(G);
  groupNormaliseKernel(R, null, 1, false, advantages);
  const scale = G / (G - 1);
  for (let i = 0; i < G; i++) advantages[i] = (advantages[i] as number) * scale;
  return advantages;
}
