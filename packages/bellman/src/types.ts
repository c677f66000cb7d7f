/**
 * One environment thread's consecutive actions t = 0..T-1, laid out token by token.
 *
 * Action t has `tokenCounts[t]` tokens. `values` is flat (length Σ tokenCounts): the entry for
 * token k of action t holds V(o_t, w_<k), the critic's value of the state *before* that token,
 * so the first token's entry is V(o_t).
 */
export interface TokenSegment {
  /** r_t, one per action (length T). */
  rewards: ArrayLike<number>;
  /** The episode ended after action t (cuts the bootstrap and the GAE trace). Length T. */
  dones: ArrayLike<boolean | number>;
  /** Number of tokens of each action, each >= 1 (length T). */
  tokenCounts: ArrayLike<number>;
  /** Per-token values V(o_t, w_<k), flat (length Σ tokenCounts). */
  values: ArrayLike<number>;
  /** V of the observation after action T-1; unused when `dones[T-1]`. */
  bootstrapValue: number;
}

/** One environment thread's consecutive actions with one value per action. */
export interface ActionSegment {
  /** r_t (length T). */
  rewards: ArrayLike<number>;
  /** The episode ended after action t (length T). */
  dones: ArrayLike<boolean | number>;
  /** V(o_t), one per action (length T). */
  values: ArrayLike<number>;
  /** V of the observation after action T-1; unused when `dones[T-1]`. */
  bootstrapValue: number;
}

/**
 * Where the last token of action t reads the next state's value.
 * - `'next-first-token'`: V(o_{t+1}), the value before the next action's first token (POAD, NTPO).
 * - `'next-last-token'`: the value before the next action's *last* token (the ARCHER variant).
 */
export type BootstrapMode = 'next-first-token' | 'next-last-token';

export interface TokenGaeOptions {
  /** γ, the discount between actions (γ_a in the paper). In [0, 1]. */
  gamma: number;
  /** λ of GAE. In [0, 1]. */
  lambda: number;
  /** γ_w, the discount between tokens of one action: 1 = POAD/BAD (default), γ = NTPO. */
  intraGamma?: number;
  /**
   * λ_w, the GAE λ between tokens of one action (default λ, as the papers). With γ_w = λ_w = 1
   * every token of an action sees the whole action-level GAE of the tokens after it: POAD's
   * first-token advantage then equals the action-level GAE on first-token values.
   */
  intraLambda?: number;
  /** Default `'next-first-token'`. */
  bootstrap?: BootstrapMode;
}

export interface ActionGaeOptions {
  /** γ, the discount between actions. In [0, 1]. */
  gamma: number;
  /** λ of GAE. In [0, 1]. */
  lambda: number;
}

/** Options of `softBad`. */
export interface SoftBadOptions {
  /** γ, the discount between actions. In [0, 1]. */
  gamma: number;
}

/** Advantages and critic regression targets (returns = advantages + values). */
export interface GaeResult {
  advantages: Float64Array;
  returns: Float64Array;
}

/**
 * How a group-relative advantage is scaled after the group mean is subtracted:
 * - `'std'`: divided by the group's population standard deviation plus ε = 1e-6 (GRPO).
 * - `'none'`: not scaled, only centred (Dr. GRPO).
 */
export type GroupNormalisation = 'std' | 'none';

/** Options of `grpoAdvantages`. */
export interface GrpoOptions {
  /** `'std'` for GRPO, `'none'` for Dr. GRPO. */
  normalise: GroupNormalisation;
}

/** One episode of a GiGPO group: the state before each step and the reward of each step. */
export interface GigpoTrajectory {
  /** s_t, the state (observation text) the agent acted in at step t. Length T. */
  states: readonly string[];
  /** r_t, the reward of step t. Length T, like `states`. */
  rewards: ArrayLike<number>;
}

/** Options of `gigpoAdvantages`. */
export interface GigpoOptions {
  /** γ, the discount of the step-level return G_t = Σ_k γ^k·r_{t+k}. In [0, 1]. */
  gamma: number;
  /** ω, the weight of the step-level advantage in the combined one. Finite and >= 0. */
  omega: number;
  /** The normalisation of both levels, episode and step: `'std'` (GRPO) or `'none'` (Dr. GRPO). */
  normalise: GroupNormalisation;
}

/** GiGPO's advantages of one group; `step[i]` and `combined[i]` have one entry per step of episode i. */
export interface GigpoResult {
  /** A^E_i, the episode-level advantage of each episode. */
  episode: Float64Array;
  /** A^S_{i,t}, the step-level advantage of each step, over its anchor group. */
  step: Float64Array[];
  /** A^E_i + ω·A^S_{i,t}, the advantage every token of step t of episode i gets. */
  combined: Float64Array[];
}
