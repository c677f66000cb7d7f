import { EnvArgumentError } from '@poad/envs-core';
import { DEFAULT_REWARDS, type OvercookedRewards } from './rewards.js';
import { OVERCOOKED_TASKS, type OvercookedTask, type OvercookedTaskName } from './tasks.js';
import type { OvercookedFixes } from './world.js';

/** Options of `createOvercookedEnv`. */
export interface OvercookedEnvOptions {
  /** Reward values; missing entries keep the paper's defaults (see `DEFAULT_REWARDS`). */
  rewards?: Partial<OvercookedRewards>;
  /**
   * Primitive step limit (default 200). As in the original, it is checked when a macro-action
   * ends, so an episode can run a few primitive steps past it.
   */
  maxPrimitiveSteps?: number;
  /** Opt-in fixes of dynamics quirks; all off by default. */
  fixes?: OvercookedFixes;
  /**
   * Reuse first moves of the A* search per (agent cell, target cell) on the open floor
   * (default true). Results are identical either way; `false` runs the search every step.
   */
  navigationCache?: boolean;
}

/** Options after validation, with defaults filled in. */
export interface ResolvedOvercookedOptions {
  readonly task: OvercookedTask;
  readonly rewards: Readonly<OvercookedRewards>;
  readonly maxPrimitiveSteps: number;
  readonly fixes: Readonly<OvercookedFixes>;
  readonly navigationCache: boolean;
}

const TASK_NAMES = Object.keys(OVERCOOKED_TASKS);

/** Accepts `tomato-salad` or `overcooked/tomato-salad` (and the same for the other task). */
export function resolveTask(task: string): OvercookedTask {
  const name = task.startsWith('overcooked/') ? task.slice('overcooked/'.length) : task;
  const found = OVERCOOKED_TASKS[name as OvercookedTaskName];
  if (typeof task !== 'string' || !found) {
    throw new EnvArgumentError(
      'createOvercookedEnv(task)',
      `unknown task ${JSON.stringify(task)}; use one of ${TASK_NAMES.map((n) => JSON.stringify(n)).join(', ')}.`,
    );
  }
  return found;
}

/** Validates options and fills in defaults; throws `EnvArgumentError` naming the bad field. */
export function resolveOptions(
  task: string,
  options: OvercookedEnvOptions = {},
): ResolvedOvercookedOptions {
  const resolvedTask = resolveTask(task);
  if (options === null || typeof options !== 'object') {
    throw new EnvArgumentError('createOvercookedEnv(options)', 'expected an object or undefined.');
  }
  const rewards: OvercookedRewards = { ...DEFAULT_REWARDS };
  for (const [key, value] of Object.entries(options.rewards ?? {})) {
    if (!(key in DEFAULT_REWARDS)) {
      throw new EnvArgumentError(
        `options.rewards.${key}`,
        `unknown reward; use ${Object.keys(DEFAULT_REWARDS).join(', ')}.`,
      );
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new EnvArgumentError(
        `options.rewards.${key}`,
        `expected a finite number, got ${String(value)}.`,
      );
    }
    rewards[key as keyof OvercookedRewards] = value;
  }
  const max = options.maxPrimitiveSteps ?? 200;
  if (!Number.isInteger(max) || max < 1) {
    throw new EnvArgumentError(
      'options.maxPrimitiveSteps',
      `expected a positive integer (the paper uses 200), got ${String(max)}.`,
    );
  }
  const fixes = { ...(options.fixes ?? {}) };
  for (const [key, value] of Object.entries(fixes)) {
    if (key !== 'subtaskRewardOnce' && key !== 'strictStepLimit') {
      throw new EnvArgumentError(
        `options.fixes.${key}`,
        'unknown fix; use subtaskRewardOnce or strictStepLimit.',
      );
    }
    if (typeof value !== 'boolean') {
      throw new EnvArgumentError(
        `options.fixes.${key}`,
        `expected true or false, got ${String(value)}.`,
      );
    }
  }
  const cache = options.navigationCache ?? true;
  if (typeof cache !== 'boolean') {
    throw new EnvArgumentError(
      'options.navigationCache',
      `expected true or false, got ${String(cache)}.`,
    );
  }
  return { task: resolvedTask, rewards, maxPrimitiveSteps: max, fixes, navigationCache: cache };
}
