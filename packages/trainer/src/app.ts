import type { TextEnv } from '@poad/envs-core';
import type { PresetEnv } from '@poad/ppo';
import type { OptionsSchema } from '@poad/run-kit';
import type { Agent } from './agent.js';
import type { RunIterationReport } from './run-trainer.js';

/** What an app (one environment family) tells the shared training CLI. */
export interface AppSpec {
  /** The npm script that runs it, e.g. `train:virtualhome` (for help and error texts). */
  command: string;
  /** Preset family of `@poad/ppo`. */
  family: PresetEnv;
  /** The `--model` default (`'default'` unless set, e.g. `'default-code'` for DataSciCoding). */
  defaultModel?: string;
  /**
   * The `--eval-episodes` default (100 unless set; DataSciCoding sets fewer: its greedy policy
   * writes the same program in every episode, and each program runs in the sandbox).
   */
  defaultEvalEpisodes?: number;
  /** One line for `--help`. */
  summary: string;
  /** Task names the app accepts for `--task`. */
  tasks: readonly string[];
  defaultTask: string;
  /** Registry-style id of a task, e.g. `virtualhome/food-preparation`. */
  envId(task: string): string;
  /**
   * A fresh environment for a task (`options`: every resolved option, extra ones included;
   * `index`: its place 0, 1, … in the vector of parallel environments being built).
   */
  makeEnv(task: string, options?: Record<string, unknown>, index?: number): TextEnv;
  /** The option name of the task on the command line (default `task`, e.g. `dataset`). */
  taskOption?: string;
  /** App-specific options added to the common ones (e.g. `--csv FILE --target COLUMN`). */
  extraOptions?: OptionsSchema;
  /** Checks app-specific options before any work starts; throws OptionError naming the fix. */
  validate?(options: Record<string, unknown>): void;
  /**
   * Checks the inputs that need reading (e.g. a dataset file) after `validate` and before the
   * model is loaded; throws OptionError naming the problem and the fix.
   */
  prepare?(options: Record<string, unknown>): Promise<void>;
  /**
   * Called after every iteration, before its metrics row is written, e.g. to keep the best
   * program found so far; the numbers it returns become extra columns of that row.
   */
  onIteration?(
    report: RunIterationReport,
    runDir: string,
    agent: Agent,
  ): Promise<Record<string, number> | void>;
  /** Best achievable logged (discounted) return of a task, for "steps to 90% of optimum". */
  optimalReturn?(task: string): number | undefined;
  /** Tasks an evaluation covers for a trained task (itself first, then unseen variants). */
  evalTasks(task: string): readonly string[];
  /** Example command lines for `--help`. */
  examples: readonly string[];
}
