import type { EnvPresets } from './presets.js';

/**
 * The contract between environments and learners.
 *
 * An environment is a text game: every step shows the agent an `observation` (the prompt it
 * continues) and, for a restricted action space, the list of valid action labels. Open action
 * spaces (free text, e.g. code) set `actions` to `null`.
 */
export interface TextStep {
  /** The prompt the agent continues. */
  observation: string;
  /** Valid action labels now, in the environment's order; `null` = open action space (free text). */
  actions: readonly string[] | null;
  /** Reward for the action that led here (0 after `reset`). */
  reward: number;
  /** Task success or failure ended the episode. */
  terminated: boolean;
  /** The step limit ended the episode. */
  truncated: boolean;
  /**
   * Extra data. At episode end it holds `discountedReturn` (the paper's logged return) and
   * `length` (number of agent steps).
   */
  info: Record<string, unknown>;
}

export interface TextEnv {
  /** Registry id, e.g. `virtualhome/food-preparation`. */
  readonly id: string;
  /** Starts a new episode. The same seed gives the same episode. */
  reset(options?: { seed?: number }): Promise<TextStep>;
  /** Applies one action label (or free text for open action spaces). */
  step(action: string): Promise<TextStep>;
  /** Releases resources (processes, files). Safe to call twice. */
  close(): Promise<void>;
}

/** Creates a fresh environment; options are environment-specific. */
export type EnvFactory<O = Record<string, unknown>> = (options?: O) => TextEnv;

/** Optional description of a registered environment. */
export interface EnvMeta {
  /** Training presets (see {@link EnvPresets}); a run of the environment starts from them. */
  presets?: EnvPresets;
  /** Best achievable logged (discounted) return, for "steps to 90% of the optimum". */
  optimalReturn?: number;
  /**
   * Registered ids of unseen variants that an evaluation of a policy trained here also plays
   * (e.g. the food-preparation tasks with other foods).
   */
  unseenVariants?: readonly string[];
  /** One line saying what the environment is. */
  description?: string;
  /** Upper bound on agent steps per episode (what `checkEnv` verifies). */
  maxSteps?: number;
  /** `discrete` = a list of labels each step; `open` = free text (`actions === null`). */
  actionSpace?: 'discrete' | 'open';
  /** Discount used for `info.discountedReturn`. */
  gamma?: number;
  /**
   * The factory's options as a `@poad/config` options schema (field → type, default, range,
   * meaning): the `poad` command of `@poad/trainer` offers them as flags and passes what it reads
   * to the factory.
   */
  options?: Readonly<Record<string, object>>;
  /** Replace an existing registration with a different factory instead of throwing. */
  override?: boolean;
}
