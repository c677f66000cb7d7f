import { PpoConfigError } from './errors.js';

/** Which advantage estimator and surrogate the trainer runs. */
export type Algorithm = 'poad' | 'ntpo' | 'archer' | 'twosome';

/** How a candidate's summed token log-prob is normalised by the TWOSOME sampler. */
export type CandidateNormalisation = 'words' | 'tokens' | 'none';

/**
 * The token policy of restricted action spaces: the language model's full-vocabulary softmax
 * with labels sampled by the TWOSOME softmax (the paper), or each token renormalised over the
 * tokens that continue a valid label, with labels sampled from the product (see `label-tokens.ts`).
 */
export type TokenSpace = 'vocabulary' | 'labels';

/** How advantages are standardised in each minibatch. */
export type AdvantageNormalisation = 'masked' | 'nan-trick' | 'none' | `chunk:${number}`;

/**
 * Every hyper-parameter of a run, in one place. Defaults are `mappo/config.py`'s, with the
 * corrections listed in the README; presets per environment and algorithm live in `presets.ts`.
 */
export interface PpoConfig {
  // ---- algorithm ----
  /** poad (BAD, γ_w = 1), ntpo (γ_w = `intraGamma`), archer (next-last-token bootstrap) or twosome (action level). */
  algorithm: Algorithm;
  /** Inter-action discount γ (γ_a). */
  gamma: number;
  /** GAE λ, applied per token for token-level algorithms and per action for twosome. */
  gaeLambda: number;
  /** NTPO's intra-action discount γ_w; `null` means γ_w = γ. Ignored by poad (1), archer (γ), twosome. */
  intraGamma: number | null;
  /**
   * λ_w, the GAE λ between the tokens of one action (poad, ntpo, archer); `null` means λ_w = λ.
   * With λ_w = 1, POAD's first-token advantage is the action-level GAE (TWOSOME's weight).
   */
  intraLambda: number | null;
  /** Treat truncation like termination (no bootstrap), as the original code does. Default false: bootstrap from V(final observation). */
  truncationAsTermination: boolean;

  // ---- rollout ----
  /** Steps T per environment per iteration (`episode_length`). */
  numSteps: number;
  /** Candidate-score normalisation of the TWOSOME sampler: ÷ word count (default), ÷ token count, or none. */
  candidateNormalisation: CandidateNormalisation;
  /**
   * Restricted action spaces, token-level algorithms: 'vocabulary' (default, the paper) scores
   * tokens over the full vocabulary and samples labels by the TWOSOME softmax; 'labels'
   * renormalises every token over the continuations of valid labels and samples labels from
   * the product, so the optimised and the acting policy are one. Not for twosome.
   */
  tokenSpace: TokenSpace;
  /** Take the arg-max action (and greedy generation) instead of sampling. */
  greedy: boolean;
  /** Open action spaces: most new tokens per action (`max_new_tokens`). */
  maxNewTokens: number;
  /** Open action spaces: sampling temperature (behaviour log-probs are stored at temperature 1). */
  temperature: number;
  /** Open action spaces: top-k filter when sampling (0 = off). */
  topK: number;

  // ---- update ----
  /** PPO epochs over each rollout (`ppo_epoch`). */
  epochs: number;
  /** Minibatches per epoch; size ⌊T·N / numMinibatches⌋, the remainder is dropped. */
  numMinibatches: number;
  /** Chunks per minibatch for gradient accumulation (`gradient_cp_steps`); must divide the minibatch size. */
  gradAccumulation: number;
  /** Policy ratio clip ε (also the value clip range). */
  clip: number;
  /** Entropy bonus coefficient c_H. */
  entropyCoef: number;
  /** Multiplier of the critic loss. */
  valueLossCoef: number;
  /** Critic regression loss per element: e²/2 ('mse') or Huber with `huberDelta`. */
  valueLoss: 'mse' | 'huber';
  /** Huber threshold δ. */
  huberDelta: number;
  /** Advantage standardisation: over real tokens ('masked', default), the original NaN trick, or none. */
  advantageNormalisation: AdvantageNormalisation;
  /** Approximate-KL threshold: a minibatch whose KL exceeds it skips its actor step; `null` disables. */
  targetKl: number | null;
  /** Actor learning rate (AdamW). */
  lr: number;
  /** Critic learning rate (Adam). */
  criticLr: number;
  /** Actor decoupled weight decay (AdamW). */
  weightDecay: number;
  /** Adam ε for both optimisers. */
  adamEps: number;
  /** Adam β1 for both optimisers. */
  adamBeta1: number;
  /** Adam β2 for both optimisers. */
  adamBeta2: number;
  /** Global gradient-norm clip of the actor; `null` disables. */
  maxGradNorm: number | null;
  /** Global gradient-norm clip of the critic; `null` disables. */
  criticMaxGradNorm: number | null;
  /**
   * Non-finite guard: a minibatch whose critic or actor loss or gradient norm is NaN or ±∞ skips
   * that optimiser step (weights and optimiser state untouched); after this many consecutive
   * such minibatches (counted across updates) the update throws `NonFiniteUpdateError`.
   */
  maxNonFiniteSkips: number;

  // ---- run ----
  /** Seed of the trainer's generator (sampling, generation, minibatch order). */
  seed: number;
}

/** `mappo/config.py` defaults (VirtualHome-like sizes), used under every preset. */
export const defaultConfig: Readonly<PpoConfig> = Object.freeze({
  algorithm: 'poad',
  gamma: 0.95,
  gaeLambda: 0.95,
  intraGamma: null,
  intraLambda: null,
  truncationAsTermination: false,
  numSteps: 32,
  candidateNormalisation: 'words',
  tokenSpace: 'vocabulary',
  greedy: false,
  maxNewTokens: 10,
  temperature: 0.5,
  topK: 50,
  epochs: 1,
  numMinibatches: 4,
  gradAccumulation: 1,
  clip: 0.2,
  entropyCoef: 0.01,
  valueLossCoef: 0.5,
  valueLoss: 'mse',
  huberDelta: 10,
  advantageNormalisation: 'masked',
  targetKl: 0.02,
  lr: 1e-6,
  criticLr: 5e-5,
  weightDecay: 0,
  adamEps: 1e-5,
  adamBeta1: 0.9,
  adamBeta2: 0.999,
  maxGradNorm: 0.5,
  criticMaxGradNorm: 0.5,
  maxNonFiniteSkips: 8,
  seed: 1,
} satisfies PpoConfig);

const ALGORITHMS: readonly Algorithm[] = ['poad', 'ntpo', 'archer', 'twosome'];

function positiveInt(cfg: PpoConfig, key: keyof PpoConfig): void {
  const v = cfg[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new PpoConfigError(`config.${key}`, `expected an integer >= 1, got ${String(v)}.`);
  }
}

function inRange(cfg: PpoConfig, key: keyof PpoConfig, lo: number, hi: number): void {
  const v = cfg[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi) {
    throw new PpoConfigError(
      `config.${key}`,
      `expected a number in [${lo}, ${hi}], got ${String(v)}.`,
    );
  }
}

function positiveOrNull(cfg: PpoConfig, key: keyof PpoConfig): void {
  const v = cfg[key];
  if (v === null) return;
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
    throw new PpoConfigError(
      `config.${key}`,
      `expected a positive number or null, got ${String(v)}.`,
    );
  }
}

function oneOf(cfg: PpoConfig, key: keyof PpoConfig, allowed: readonly string[]): void {
  if (!allowed.includes(cfg[key] as string)) {
    throw new PpoConfigError(
      `config.${key}`,
      `expected one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${String(cfg[key])}.`,
    );
  }
}

/**
 * Fills unspecified fields from {@link defaultConfig} and validates every field.
 * @throws PpoConfigError naming the first invalid field.
 */
export function resolveConfig(overrides: Partial<PpoConfig> = {}): PpoConfig {
  for (const key of Object.keys(overrides)) {
    if (!(key in defaultConfig)) {
      throw new PpoConfigError(
        `config.${key}`,
        'unknown option; see PpoConfig for the valid keys.',
      );
    }
  }
  const cfg: PpoConfig = { ...defaultConfig, ...overrides };
  oneOf(cfg, 'algorithm', ALGORITHMS);
  oneOf(cfg, 'candidateNormalisation', ['words', 'tokens', 'none']);
  oneOf(cfg, 'tokenSpace', ['vocabulary', 'labels']);
  if (cfg.tokenSpace === 'labels' && cfg.algorithm === 'twosome') {
    throw new PpoConfigError(
      'config.tokenSpace',
      "'labels' is for token-level algorithms (poad, ntpo, archer); twosome already optimises a distribution over labels. Use tokenSpace 'vocabulary' with twosome.",
    );
  }
  if (!/^chunk:[1-9]\d*$/.test(String(cfg.advantageNormalisation)))
    oneOf(cfg, 'advantageNormalisation', ['masked', 'nan-trick', 'none', 'chunk:N']);
  oneOf(cfg, 'valueLoss', ['mse', 'huber']);
  inRange(cfg, 'gamma', 0, 1);
  inRange(cfg, 'gaeLambda', 0, 1);
  if (cfg.intraGamma !== null) inRange(cfg, 'intraGamma', 0, 1);
  if (cfg.intraLambda !== null) inRange(cfg, 'intraLambda', 0, 1);
  for (const k of [
    'numSteps',
    'maxNewTokens',
    'epochs',
    'numMinibatches',
    'gradAccumulation',
    'maxNonFiniteSkips',
  ] as const) {
    positiveInt(cfg, k);
  }
  if (!Number.isInteger(cfg.topK) || cfg.topK < 0) {
    throw new PpoConfigError('config.topK', `expected an integer >= 0, got ${cfg.topK}.`);
  }
  inRange(cfg, 'clip', 0, 10);
  inRange(cfg, 'entropyCoef', 0, 1e6);
  inRange(cfg, 'valueLossCoef', 0, 1e6);
  inRange(cfg, 'huberDelta', 1e-12, 1e12);
  inRange(cfg, 'temperature', 1e-6, 1e6);
  inRange(cfg, 'lr', 0, 1);
  inRange(cfg, 'criticLr', 0, 1);
  inRange(cfg, 'weightDecay', 0, 1);
  inRange(cfg, 'adamEps', 1e-30, 1);
  inRange(cfg, 'adamBeta1', 0, 0.999999);
  inRange(cfg, 'adamBeta2', 0, 0.999999999);
  positiveOrNull(cfg, 'targetKl');
  positiveOrNull(cfg, 'maxGradNorm');
  positiveOrNull(cfg, 'criticMaxGradNorm');
  if (!Number.isInteger(cfg.seed)) {
    throw new PpoConfigError('config.seed', `expected an integer, got ${cfg.seed}.`);
  }
  if (typeof cfg.greedy !== 'boolean' || typeof cfg.truncationAsTermination !== 'boolean') {
    throw new PpoConfigError('config.greedy/truncationAsTermination', 'expected booleans.');
  }
  return cfg;
}
