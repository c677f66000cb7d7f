import {
  configResolver,
  defaultsOf,
  defineSchema,
  type OptionValues,
  pickSchema,
  type ResolveOptions,
} from '@poad/config';
import { PpoConfigError } from './errors.js';

/**
 * Every hyper-parameter of a PPO run, in one place: name, default, range and meaning. This schema
 * is at once the {@link PpoConfig} type, the training commands' flags (`numMinibatches` is
 * `--num-minibatches`), the keys of config files and of a run's config.json, and the one
 * validation ({@link resolveConfig}). Defaults are `mappo/config.py`'s, with the corrections listed
 * in the README; each environment's presets (its package) change some of them.
 */
export const ppoConfigSchema = defineSchema({
  // ---- algorithm ----
  algorithm: {
    type: 'enum',
    choices: ['poad', 'ntpo', 'archer', 'twosome'],
    default: 'poad',
    description:
      'Advantage estimator and surrogate: poad (BAD, γ_w = 1), ntpo (γ_w = intra-gamma), archer (next-last-token bootstrap), twosome (action level)',
  },
  gamma: {
    type: 'number',
    default: 0.95,
    min: 0,
    max: 1,
    description: 'Discount γ between actions',
  },
  gaeLambda: {
    type: 'number',
    default: 0.95,
    min: 0,
    max: 1,
    description: 'GAE λ (per token for the token-level algorithms, per action for twosome)',
  },
  intraGamma: {
    type: 'number',
    optional: true,
    min: 0,
    max: 1,
    description:
      'NTPO intra-action discount γ_w (unset: γ); ignored by poad (1), archer (γ), twosome',
  },
  intraLambda: {
    type: 'number',
    optional: true,
    min: 0,
    max: 1,
    description:
      "GAE λ between the tokens of one action, λ_w (unset: λ); 1 gives an action's first token the action-level GAE (TWOSOME's weight); poad/ntpo/archer",
  },
  truncationAsTermination: {
    type: 'boolean',
    default: false,
    description:
      'Treat truncation like termination (no bootstrap), as the original code does; off: bootstrap from V(final observation)',
  },

  // ---- rollout ----
  numSteps: {
    type: 'integer',
    default: 32,
    min: 1,
    description: 'Rollout length T per environment per iteration',
  },
  candidateNormalisation: {
    type: 'enum',
    choices: ['words', 'tokens', 'none'],
    default: 'words',
    description:
      "TWOSOME sampler: divide a candidate's summed token log-prob by its word count, token count, or nothing",
  },
  tokenSpace: {
    type: 'enum',
    choices: ['vocabulary', 'labels'],
    default: 'vocabulary',
    description:
      "Token policy on labelled actions: 'vocabulary' scores tokens over the whole vocabulary and samples labels by the TWOSOME softmax (the paper); 'labels' renormalises each token over the tokens that continue a valid label and samples labels from the product (twosome then optimises that product's label log-probs, the sum of the restricted token log-probs)",
  },
  greedy: {
    type: 'boolean',
    default: false,
    description: 'Take the arg-max action (and greedy generation) instead of sampling',
  },
  maxNewTokens: {
    type: 'integer',
    default: 10,
    min: 1,
    max: 2048,
    description: 'Open action spaces: most tokens generated per action (stops early at EOS)',
  },
  temperature: {
    type: 'number',
    default: 0.5,
    min: 1e-6,
    max: 1e6,
    description:
      'Open action spaces: sampling temperature (behaviour log-probs are stored at temperature 1)',
  },
  topK: {
    type: 'integer',
    default: 50,
    min: 0,
    description: 'Open action spaces: top-k filter when sampling (0 = off)',
  },
  stopCheckEvery: {
    type: 'integer',
    default: 8,
    min: 1,
    max: 2048,
    description:
      'Open action spaces on webgpu: tokens generated between two reads of the drawn ids (stop detection; the tokens are the same for any value)',
  },

  // ---- update ----
  epochs: { type: 'integer', default: 1, min: 1, description: 'PPO epochs per rollout' },
  numMinibatches: {
    type: 'integer',
    default: 4,
    min: 1,
    description: 'Minibatches per epoch, of ⌊T·N / num-minibatches⌋ samples (the rest is dropped)',
  },
  gradAccumulation: {
    type: 'integer',
    default: 1,
    min: 1,
    description: 'Gradient-accumulation chunks per minibatch (must divide the minibatch size)',
  },
  clip: {
    type: 'number',
    default: 0.2,
    min: 0,
    max: 10,
    description: 'PPO ratio clip ε (also the value clip)',
  },
  entropyCoef: {
    type: 'number',
    default: 0.01,
    min: 0,
    max: 1e6,
    description: 'Entropy bonus coefficient c_H',
  },
  valueLossCoef: {
    type: 'number',
    default: 0.5,
    min: 0,
    max: 1e6,
    description: 'Multiplier of the critic loss',
  },
  valueLoss: {
    type: 'enum',
    choices: ['mse', 'huber'],
    default: 'mse',
    description: 'Critic regression loss per element: e²/2 (mse) or Huber with huber-delta',
  },
  huberDelta: {
    type: 'number',
    default: 10,
    min: 1e-12,
    max: 1e12,
    description: 'Huber threshold δ',
  },
  advantageNormalisation: {
    type: 'string',
    default: 'masked',
    placeholder: 'mode',
    pattern: /^(masked|nan-trick|none|chunk:[1-9]\d*)$/,
    expected: 'masked, nan-trick, none or chunk:N with N ≥ 1 (e.g. chunk:4)',
    description:
      "How a minibatch's advantages are standardised: masked (over real tokens), nan-trick (the POAD code's), none, or chunk:N (the TWOSOME code's: each N consecutive samples on their own, unbiased σ)",
  },
  targetKl: {
    type: 'number',
    default: 0.02,
    min: 0,
    description: 'Approximate-KL threshold above which a minibatch skips its actor step (0 = off)',
  },
  lr: {
    type: 'number',
    default: 1e-6,
    min: 0,
    max: 1,
    description: 'Actor (LoRA) learning rate, AdamW',
  },
  criticLr: {
    type: 'number',
    default: 5e-5,
    min: 0,
    max: 1,
    description:
      "Critic learning rate, Adam (value head, and the critic's adapter with criticAdapter lora); the paper's critic learns 20–50× faster than its actor: set it to that multiple of lr",
  },
  weightDecay: {
    type: 'number',
    default: 0,
    min: 0,
    max: 1,
    description: 'Actor decoupled weight decay (AdamW)',
  },
  adamEps: {
    type: 'number',
    default: 1e-5,
    min: 1e-30,
    max: 1,
    description: 'Adam ε of both optimisers',
  },
  adamBeta1: {
    type: 'number',
    default: 0.9,
    min: 0,
    max: 0.999999,
    description: 'Adam β1 of both optimisers',
  },
  adamBeta2: {
    type: 'number',
    default: 0.999,
    min: 0,
    max: 0.999999999,
    description: 'Adam β2 of both optimisers',
  },
  maxGradNorm: {
    type: 'number',
    default: 0.5,
    min: 0,
    description: "Global gradient-norm clip of the actor's step (0 = off)",
  },
  criticMaxGradNorm: {
    type: 'number',
    default: 0.5,
    min: 0,
    description: "Global gradient-norm clip of the critic's step (0 = off)",
  },
  critic: {
    type: 'enum',
    choices: ['learned', 'oracle', 'oracle-star'],
    default: 'learned',
    description:
      "Where the values of the targets and advantages come from: learned (the value head), or, on environments with exact values (the credit tasks), oracle (the exact V^π of the policy that acts, at every token prefix) or oracle-star (the optimal V*), with poad or twosome; under an oracle the value head's loss is computed on the oracle's values and changes nothing",
  },

  // ---- the learned critic ----
  criticAdapter: {
    type: 'enum',
    choices: ['none', 'lora'],
    default: 'none',
    description:
      "none: the value head reads the frozen base's hidden states; lora: the critic has a LoRA adapter of its own on the base (criticLoraRank, criticLoraAlpha, criticLoraTargets), trained with the head at criticLr, so its features can move (saved as a PEFT adapter in the checkpoint's model/critic/)",
  },
  criticLoraRank: {
    type: 'integer',
    default: 8,
    min: 1,
    max: 4096,
    description: "Rank r of the critic's LoRA adapter (criticAdapter lora)",
  },
  criticLoraAlpha: {
    type: 'number',
    default: 16,
    min: 1e-6,
    max: 1e6,
    description:
      "LoRA alpha of the critic's adapter (its update is scaled by alpha / r; criticAdapter lora)",
  },
  criticLoraTargets: {
    type: 'list',
    choices: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    default: ['q_proj', 'v_proj'],
    description: "Modules of every layer that carry the critic's LoRA adapter (criticAdapter lora)",
  },
  criticFeatures: {
    type: 'enum',
    choices: ['last', 'layers', 'actor'],
    default: 'last',
    description:
      "What the value head reads: last, the final hidden state; layers, every layer's hidden states concatenated (each through the final norm: layers × hidden numbers); actor, the actor's own adapted final hidden state, which moves as the actor learns (a value head on the policy, as in TRL); with criticAdapter lora, last and layers are read with the critic's adapter on",
  },
  criticGradToActor: {
    type: 'boolean',
    default: false,
    description:
      "criticFeatures actor: the critic's loss (× valueLossCoef) is added to the actor's, so its gradient reaches the actor's adapter at the actor's lr (skipped with the actor's step); off, only the value head learns from it",
  },
  targetCriticEvery: {
    type: 'integer',
    default: 0,
    min: 0,
    description:
      "A target critic (the paper's Eq. 15): the returns the critic regresses on are computed from a copy of the critic's weights, refreshed after every N updates (0 = off); the advantages keep the online critic's values",
  },
  targetCriticTau: {
    type: 'number',
    default: 1,
    min: 1e-6,
    max: 1,
    description:
      'How a refresh of the target critic moves it: θ̄ ← τ·θ + (1 − τ)·θ̄ (1: a copy; below 1: Polyak averaging); needs targetCriticEvery',
  },
  criticWarmup: {
    type: 'integer',
    default: 0,
    min: 0,
    description:
      'Iterations at the start in which only the critic learns: the actor takes no step (its losses are still reported), the environment steps count as usual',
  },
  criticEpochs: {
    type: 'integer',
    optional: true,
    min: 1,
    description:
      "The critic's passes over each rollout (unset: epochs); each pass draws its own minibatch order, and passes beyond the actor's epochs step the critic alone",
  },
  valueClip: {
    type: 'boolean',
    default: true,
    description:
      "Clip the value loss around the rollout's values (max of the clipped and unclipped errors, clip ε); off: the plain error of the new values",
  },
  maxNonFiniteSkips: {
    type: 'integer',
    default: 8,
    min: 1,
    max: 1_000_000,
    description:
      'A minibatch whose loss or gradient norm is NaN/Inf skips its optimiser step (weights untouched); after this many in a row the update stops with NonFiniteUpdateError',
  },

  // ---- run ----
  seed: {
    type: 'integer',
    default: 1,
    min: 0,
    description: 'Seed of every random choice (envs, sampling, initialisation, minibatch order)',
  },
});

/** How advantages are standardised in each minibatch. */
export type AdvantageNormalisation = 'masked' | 'nan-trick' | 'none' | `chunk:${number}`;

/** Every hyper-parameter of a PPO run (see {@link ppoConfigSchema} for each field's meaning). */
export type PpoConfig = Omit<OptionValues<typeof ppoConfigSchema>, 'advantageNormalisation'> & {
  advantageNormalisation: AdvantageNormalisation;
};

/** Which advantage estimator and surrogate the trainer runs. */
export type Algorithm = PpoConfig['algorithm'];

/** How a candidate's summed token log-prob is normalised by the TWOSOME sampler. */
export type CandidateNormalisation = PpoConfig['candidateNormalisation'];

/**
 * The token policy of restricted action spaces: the language model's full-vocabulary softmax
 * with labels sampled by the TWOSOME softmax (the paper), or each token renormalised over the
 * tokens that continue a valid label, with labels sampled from the product (see `label-tokens.ts`).
 */
export type TokenSpace = PpoConfig['tokenSpace'];

/**
 * Where the critic's values come from: the value head (`learned`), or an environment's exact
 * values answering the policy's value calls (`oracle`: V^π of the policy that acts; `oracle-star`:
 * V*). The trainer reads the values the same way in every case.
 */
export type CriticSource = PpoConfig['critic'];

/** The schema's defaults: `mappo/config.py`'s values, used under every preset. */
export const defaultConfig: Readonly<PpoConfig> = Object.freeze(
  defaultsOf(ppoConfigSchema) as PpoConfig,
);

/**
 * The sampler's fields: the rollout's length and how actions are chosen (a label by the TWOSOME
 * sampler, or generated text). Every trainer family that acts takes them with these names, so a
 * flag keeps one meaning (`@poad/etpo` and `@poad/grpo` pick them from {@link ppoConfigSchema}).
 */
export const SAMPLER_FIELDS = [
  'numSteps',
  'candidateNormalisation',
  'tokenSpace',
  'greedy',
  'maxNewTokens',
  'temperature',
  'topK',
  'stopCheckEvery',
] as const;

/** The AdamW fields besides the learning rates, shared in the same way as {@link SAMPLER_FIELDS}. */
export const ADAMW_FIELDS = ['weightDecay', 'adamEps', 'adamBeta1', 'adamBeta2'] as const;

/**
 * The fields every trainer on this package's rollout and `TrainerBase` shares with PPO: the
 * discount, the sampler ({@link SAMPLER_FIELDS}), the minibatch count, the actor's learning rate
 * and AdamW settings, its gradient clip, the non-finite guard and the seed. An algorithm takes
 * them, and the other PPO fields it means the same way, with {@link pickPpoFields}.
 */
export const TRAINER_FIELDS = [
  'gamma',
  ...SAMPLER_FIELDS,
  'numMinibatches',
  'lr',
  ...ADAMW_FIELDS,
  'maxGradNorm',
  'maxNonFiniteSkips',
  'seed',
] as const;

/**
 * The fields `keys` of {@link ppoConfigSchema} (same names, ranges, defaults and descriptions),
 * in the order of that schema whatever the order of `keys`, for an algorithm's schema that shares
 * them: each flag keeps one meaning, and the shared flags of every algorithm come in one order.
 * @throws RangeError naming a key that is not a field of the schema.
 */
export function pickPpoFields<K extends keyof typeof ppoConfigSchema & string>(
  keys: readonly K[],
): Pick<typeof ppoConfigSchema, K> {
  const wanted = new Set<string>(keys);
  for (const k of wanted)
    if (!(k in ppoConfigSchema)) throw new RangeError(`pickPpoFields: PPO has no field ${k}`);
  const inOrder = Object.keys(ppoConfigSchema).filter((k) => wanted.has(k)) as K[];
  return pickSchema(ppoConfigSchema, inOrder);
}

const resolvePpo = configResolver(ppoConfigSchema, {
  error: (label, reason) => new PpoConfigError(label, reason.endsWith('.') ? reason : `${reason}.`),
  check: (c) => checkPpoConfig(c as PpoConfig),
});

/**
 * Fills unset fields from the schema's defaults (below them, `options.layers`: e.g. an
 * environment's preset) and checks every field, once: the schema's ranges and choices, then the
 * rules that tie fields together. A config this function returned passes through it again
 * unchanged, so a trainer given one does not check it twice. `options` also says how errors name
 * a field (`config.lr` by default; the command line passes its flags' sources).
 * @throws PpoConfigError naming the first invalid field.
 */
export function resolveConfig(
  overrides: Partial<PpoConfig> = {},
  options: ResolveOptions = {},
): PpoConfig {
  return resolvePpo(
    overrides as Partial<OptionValues<typeof ppoConfigSchema>>,
    options,
  ) as PpoConfig;
}

/**
 * The rules between fields that the schema's per-field checks cannot state (run by
 * {@link resolveConfig}, and by a caller that resolved the schema's fields itself).
 * @throws PpoConfigError naming the field.
 */
export function checkPpoConfig(cfg: PpoConfig): void {
  checkCriticFields(cfg);
  // The exact values are the BAD backup's (no discount inside an action): POAD's targets, and
  // at an action's first token TWOSOME's; NTPO and ARCHER discount between tokens.
  const critic = cfg.critic ?? 'learned';
  if (critic !== 'learned' && (cfg.algorithm === 'ntpo' || cfg.algorithm === 'archer')) {
    throw new PpoConfigError(
      'config.critic',
      `'${critic}' gives the exact values of the BAD backup (no discount inside an action), which are not the targets of ${cfg.algorithm}'s critic (it discounts between an action's tokens). Use it with poad or twosome, or critic 'learned'.`,
    );
  }
}

/**
 * The learned critic's options that only make sense together (checked by {@link checkPpoConfig}).
 * A config of before these fields, without them, passes.
 * @throws PpoConfigError naming the field and the fix.
 */
function checkCriticFields(cfg: PpoConfig): void {
  if (cfg.criticFeatures === 'actor' && cfg.criticAdapter === 'lora') {
    throw new PpoConfigError(
      'config.criticFeatures',
      "'actor' reads the actor's adapter, so the critic cannot have its own (criticAdapter 'lora'). Use criticFeatures 'last' or 'layers' with a critic adapter, or criticAdapter 'none'.",
    );
  }
  if (cfg.criticGradToActor === true && cfg.criticFeatures !== 'actor') {
    throw new PpoConfigError(
      'config.criticGradToActor',
      `the critic's gradient can reach the actor only through the actor's features; with criticFeatures '${cfg.criticFeatures}' it never does. Set criticFeatures 'actor', or criticGradToActor false.`,
    );
  }
  if ((cfg.targetCriticTau ?? 1) !== 1 && !(cfg.targetCriticEvery > 0)) {
    throw new PpoConfigError(
      'config.targetCriticTau',
      'moves a target critic, which is off (targetCriticEvery 0). Set targetCriticEvery to N ≥ 1 (a refresh after every N updates), or leave targetCriticTau at 1.',
    );
  }
}
