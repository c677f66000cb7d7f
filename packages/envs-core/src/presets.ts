/**
 * Values a preset sets, by field name: run options (`envs`, `envSteps`, the `model` it was tuned
 * for, `evalEpisodes`) and the fields of a trainer's config (`lr`, `numSteps`, `gamma`, …),
 * spelled as `@poad/trainer`'s run options and the config schemas of `@poad/ppo` and
 * `@poad/etpo` spell them.
 */
export type PresetValues = Readonly<Record<string, number | string | boolean>>;

/** One named preset of an environment. */
export interface EnvPreset {
  /** Where the values come from (a paper's table, a tuning run in the docs). */
  readonly source: string;
  /**
   * Values for every algorithm. Each algorithm takes the fields its config has (ETPO, for
   * example, has no entropy bonus and takes the rest), so one row serves them all.
   */
  readonly values: PresetValues;
  /** What an algorithm changes of `values`, by algorithm name. */
  readonly byAlgorithm?: Readonly<Record<string, PresetValues>>;
}

/**
 * What an environment offers a learner, which decides the algorithms that can train on it (each
 * algorithm states what it needs; `@poad/trainer` matches the two and says why when they do not).
 */
export interface EnvTraits {
  /**
   * `labels`: every step lists its valid actions (a restricted action space, as TWOSOME and
   * ARCHER need); `text`: actions are open text the policy generates.
   */
  readonly actions: 'labels' | 'text';
  /**
   * Whether a reset with a given seed always gives the same start state (`VecEnv.resetWith`), as
   * the group-relative methods (GRPO, RLOO, GiGPO) need to play a group from one state.
   */
  readonly seededResets: boolean;
}

/**
 * An environment's training settings: what it offers a learner ({@link EnvTraits}) and its named
 * presets. Environment packages export theirs and register them with the environments
 * (`EnvMeta.presets`), so that every way of training an environment (a training command,
 * `train()` of `@poad/trainer`, a comparison) starts from the same numbers.
 */
export interface EnvPresets {
  /** What the environment offers a learner; the algorithms it can train with follow from it. */
  readonly traits: EnvTraits;
  /** The preset a run takes when none is named. */
  readonly default: string;
  /** The presets by name, e.g. `small` (tuned for the embedded default model) and `paper`. */
  readonly presets: Readonly<Record<string, EnvPreset>>;
}

/**
 * The starting values this project tuned for the embedded default model (a few million
 * parameters, 2 CPU cores) on short labelled actions, on VirtualHome's food-preparation
 * (docs/results.md, "Tuning"): 8 environments × 16 steps = 128 actions per iteration, 200
 * iterations, actor lr 5e-4 and critic lr 1e-3, γ 0.95, 2 epochs of 4 minibatches, entropy bonus
 * 1e-3. Environments whose presets start from them (VirtualHome, Overcooked, the credit tasks)
 * spread them and change what differs; `train()` gives them to an environment that brings no
 * presets.
 */
export const SMALL_MODEL_VALUES: PresetValues = {
  envs: 8,
  envSteps: 25_600,
  numSteps: 16,
  lr: 5e-4,
  criticLr: 1e-3,
  gamma: 0.95,
  epochs: 2,
  numMinibatches: 4,
  gradAccumulation: 1,
  entropyCoef: 1e-3,
};
