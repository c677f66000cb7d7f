import { groupNormaliseKernel } from './groupNormalise.js';
import type { GigpoOptions, GigpoResult, GigpoTrajectory } from './types.js';
import {
  checkArrayLike,
  checkFinite,
  checkFiniteArray,
  checkGroupNormalisation,
  checkGroupSize,
  checkLength,
  checkUnitInterval,
} from './validate.js';

const FN = 'gigpoAdvantages';
const CALL = `${FN}([{ states: ['hall', 'kitchen'], rewards: [0, 1] }, { states: ['hall', 'garden'], rewards: [0, 0] }], { gamma: 0.95, omega: 1, normalise: 'std' })`;

/**
 * Group-in-Group Policy Optimization (GiGPO, arXiv 2505.10978): the advantages of a group of G
 * episodes that started from the same state, at two levels.
 *
 * - Episode level, GRPO on the undiscounted returns R_i = Σ_t r_{i,t}:
 *     A^E_i = (R_i − mean_j R_j)/(std_j R_j + ε)   or   R_i − mean_j R_j
 * - Step level, over anchor groups: the steps (i, t) of the whole group whose states s_{i,t} are
 *   equal strings. Each step's discounted return from that step on,
 *     G_{i,t} = Σ_{k≥0} γ^k·r_{i,t+k}   (G_{i,t} = r_{i,t} + γ·G_{i,t+1}, 0 after the last step),
 *   is normalised within its anchor group U:
 *     A^S_{i,t} = (G_{i,t} − mean_U G)/(std_U G + ε)   or   G_{i,t} − mean_U G
 * - Combined: A_{i,t} = A^E_i + ω·A^S_{i,t}, the advantage every token of step t's action gets.
 *
 * std is the population standard deviation and ε = 1e-6. Conventions:
 * - `normalise` applies to both levels, as in the paper: `'std'` everywhere or `'none'` (Dr. GRPO
 *   centring) everywhere.
 * - A step alone in its anchor group gets A^S = 0 (its return is its group's mean), and so does
 *   every step of an anchor group whose returns are all equal; with every state distinct,
 *   `combined` equals `episode` for each step.
 * - A state met several times counts once per visit, in the same episode or in different ones,
 *   at the same step index or not.
 * - An empty group is an error; an episode with no steps has return 0 and empty step arrays.
 * - `states` are compared as exact strings: normalise them (e.g. strip step counters) before.
 */
export function gigpoAdvantages(
  trajectories: readonly GigpoTrajectory[],
  options: GigpoOptions,
): GigpoResult {
  const trajs = checkGroupSize(
    FN,
    'trajectories',
    trajectories,
    1,
    'a group needs at least one episode',
    CALL,
  ) as ArrayLike<GigpoTrajectory>;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `${FN}: \`options\` must be an object like { gamma: 0.95, omega: 1, normalise: 'std' }; e.g. ${CALL}`,
    );
  }
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const omega = checkFinite(FN, 'options.omega', options.omega);
  if (omega < 0) {
    throw new RangeError(
      `${FN}: \`options.omega\` is the weight of the step-level advantage and must be >= 0 (the paper uses 1), got ${omega}`,
    );
  }
  const normalise = checkGroupNormalisation(FN, 'options.normalise', options.normalise, CALL);
  const G = trajs.length;
  const offsets = new Uint32Array(G + 1);
  for (let i = 0; i < G; i++) {
    const traj = trajs[i];
    const at = `trajectories[${i}]`;
    if (traj === null || typeof traj !== 'object') {
      throw new TypeError(
        `${FN}: \`${at}\` must be an object { states, rewards }, got ${traj === null ? 'null' : typeof traj}; e.g. ${CALL}`,
      );
    }
    const states = checkArrayLike(FN, `${at}.states`, traj.states);
    const rewards = checkArrayLike(FN, `${at}.rewards`, traj.rewards);
    checkLength(FN, `${at}.rewards`, rewards, states.length, 'one reward per step, like states');
    for (let t = 0; t < states.length; t++) {
      if (typeof states[t] !== 'string') {
        throw new TypeError(
          `${FN}: \`${at}.states[${t}]\` must be a string (the observation the agent acted in), got ${typeof states[t]}`,
        );
      }
    }
    checkFiniteArray(FN, `${at}.rewards`, rewards);
    offsets[i + 1] = (offsets[i] as number) + states.length;
  }

  // One walk over the steps: episode returns, discounted step returns, anchor group ids.
  const N = offsets[G] as number;
  const episodeReturns = new Float64Array(G);
  const stepReturns = new Float64Array(N);
  const anchorOf = new Uint32Array(N);
  const anchors = new Map<string, number>();
  for (let i = 0; i < G; i++) {
    const { states, rewards } = trajs[i] as GigpoTrajectory;
    const start = offsets[i] as number;
    let sum = 0;
    let g = 0;
    for (let t = states.length - 1; t >= 0; t--) {
      const r = rewards[t] as number;
      sum += r;
      g = r + gamma * g;
      stepReturns[start + t] = g;
      const s = states[t] as string;
      let id = anchors.get(s);
      if (id === undefined) {
        id = anchors.size;
        anchors.set(s, id);
      }
      anchorOf[start + t] = id;
    }
    episodeReturns[i] = sum;
  }

  const std = normalise === 'std';
  const episode = new Float64Array(G);
  groupNormaliseKernel(episodeReturns, null, 1, std, episode);
  const flatStep = new Float64Array(N);
  groupNormaliseKernel(stepReturns, anchorOf, anchors.size, std, flatStep);
  const step: Float64Array[] = [];
  const combined: Float64Array[] = [];
  for (let i = 0; i < G; i++) {
    const s = flatStep.slice(offsets[i] as number, offsets[i + 1] as number);
    const c = new Float64Array(s.length);
    const e = episode[i] as number;
    for (let t = 0; t < s.length; t++) c[t] = e + omega * (s[t] as number);
    step.push(s);
    combined.push(c);
  }
  return { episode, step, combined };
}
