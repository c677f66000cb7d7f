import type { OptionsSchema } from '@poad/config';
import type { EnvPresets, TextEnv } from '@poad/envs-core';
import type { Agent } from './agent/agent.js';
import type { SamplerConfig } from './evaluate.js';
import type { ExactValueKind, ExactValues } from './policy/oracle-critic.js';
import type { RunIterationReport } from './run-trainer.js';

/**
 * An environment as the training loop runs it: its tasks, how to build one, its presets and what
 * an evaluation plays. The `train:*` commands each hold one (apps/train-*); `train()` builds one
 * from a registered environment or a factory.
 */
export interface AppSpec {
  /** The npm script that runs it, e.g. `train:virtualhome` (for help and error texts). */
  command: string;
  /** One line for `--help`. */
  summary: string;
  /** Task names the app accepts for `--task`. */
  tasks: readonly string[];
  defaultTask: string;
  /** Registry-style id of a task, e.g. `virtualhome/food-preparation`. */
  envId(task: string): string;
  /**
   * A fresh environment for a task (`options`: the environment's own options, see
   * `extraOptions`; `index`: its place 0, 1, … in the vector of parallel environments being built).
   */
  makeEnv(task: string, options?: Record<string, unknown>, index?: number): TextEnv;
  /**
   * The environment's presets (its package exports them, e.g. `VIRTUALHOME_PRESETS`): which
   * algorithms it offers and the values a run starts from (also its `model` and `evalEpisodes`
   * when they differ from the usual defaults).
   */
  presets: EnvPresets;
  /** The option name of the task on the command line (default `task`, e.g. `dataset`). */
  taskOption?: string;
  /** The environment's own options (e.g. `--csv FILE --target COLUMN`), passed to `makeEnv`. */
  extraOptions?: OptionsSchema;
  /**
   * The values of options a run recorded before they existed had (a config.json without them is
   * read with these, not today's defaults), e.g. DataSciCoding's `scoring: 'os-seeded'`.
   */
  recordedDefaults?: Readonly<Record<string, unknown>>;
  /** Checks the environment's options before any work starts; throws OptionError naming the fix. */
  validate?(options: { task: string } & Record<string, unknown>): void;
  /**
   * Checks the inputs that need reading (e.g. a dataset file) after `validate` and before the
   * model is loaded; throws OptionError naming the problem and the fix.
   */
  prepare?(options: { task: string } & Record<string, unknown>): Promise<void>;
  /**
   * Called before every iteration's rollout with the task, the agent whose policy is about to
   * act and the sampler settings it acts with (see `actionProbabilities`): e.g. to record the
   * policy that acts, which `onIteration` sees only after the update has changed it.
   */
  beforeIteration?(context: { task: string; agent: Agent; sampler: SamplerConfig }): Promise<void>;
  /**
   * Optional: the environment's exact values, for a run with `--critic oracle` (`values:
   * 'policy'`, V^π of the policy that acts in each iteration, at every token prefix) or
   * `--critic oracle-star` (`'optimal'`, V*). Called once when the run starts, with the agent whose
   * policy acts; the lookups it returns are read during every rollout and update, so an app
   * whose values follow the acting policy updates them in `beforeIteration`. A run asking for an
   * oracle on an environment without this hook is refused.
   */
  exactCritic?(context: { task: string; agent: Agent; values: ExactValueKind }): ExactValues;
  /**
   * Called after every iteration, before its metrics row is written, e.g. to keep the best
   * program found so far; the numbers it returns become extra columns of that row. `progress`:
   * the run's env steps after this iteration (its samples are the last `report.buffer.size` of
   * them; iterations of whole episodes take a varying number).
   */
  onIteration?(
    report: RunIterationReport,
    runDir: string,
    agent: Agent,
    progress: { readonly envSteps: number },
  ): Promise<Record<string, number> | void>;
  /** Best achievable logged (discounted) return of a task, for "steps to 90% of optimum". */
  optimalReturn?(task: string): number | undefined;
  /** Tasks an evaluation covers for a trained task (itself first, then unseen variants). */
  evalTasks(task: string): readonly string[];
  /** Example command lines for `--help`. */
  examples: readonly string[];
}
