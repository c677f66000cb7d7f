import type { TextEnv } from '@poad/envs-core';
import type { PresetEnv } from '@poad/ppo';

/** What an app (one environment family) tells the shared training CLI. */
export interface AppSpec {
  /** The npm script that runs it, e.g. `train:virtualhome` (for help and error texts). */
  command: string;
  /** Preset family of `@poad/ppo`. */
  family: PresetEnv;
  /** One line for `--help`. */
  summary: string;
  /** Task names the app accepts for `--task`. */
  tasks: readonly string[];
  defaultTask: string;
  /** Registry-style id of a task, e.g. `virtualhome/food-preparation`. */
  envId(task: string): string;
  /** A fresh environment for a task. */
  makeEnv(task: string): TextEnv;
  /** Tasks an evaluation covers for a trained task (itself first, then unseen variants). */
  evalTasks(task: string): readonly string[];
  /** Example command lines for `--help`. */
  examples: readonly string[];
}
