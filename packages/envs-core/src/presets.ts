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
 * An environment's tuned training settings: which algorithms it has values for, and its named
 * presets. Environment packages export theirs and register them with the environments
 * (`EnvMeta.presets`), so that every way of training an environment (a training command,
 * `train()` of `@poad/trainer`, a comparison) starts from the same numbers.
 */
export interface EnvPresets {
  /** The algorithms these presets have values for; a run of another one is refused. */
  readonly algorithms: readonly string[];
  /** The preset a run takes when none is named. */
  readonly default: string;
  /** The presets by name, e.g. `small` (tuned for the embedded default model) and `paper`. */
  readonly presets: Readonly<Record<string, EnvPreset>>;
}
