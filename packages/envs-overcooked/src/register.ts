import { registerEnv } from '@poad/envs-core';
import { createOvercookedEnv } from './env.js';
import type { OvercookedEnvOptions } from './options.js';
import { OVERCOOKED_PRESETS, overcookedOptimalReturn } from './presets.js';
import { PRIMITIVE_DISCOUNT } from './rewards.js';
import { OVERCOOKED_TASKS } from './tasks.js';

const FACTORIES = Object.fromEntries(
  Object.entries(OVERCOOKED_TASKS).map(([name, task]) => [
    task.id,
    (options?: OvercookedEnvOptions) => createOvercookedEnv(name, options),
  ]),
);

/**
 * Registers `overcooked/tomato-salad` and `overcooked/tomato-lettuce-salad` in the
 * `@poad/envs-core` registry so `makeEnv(id, options)` can create them, with the training presets
 * and each task's best known return. Safe to call twice.
 */
export function registerOvercookedEnvs(): void {
  for (const task of Object.values(OVERCOOKED_TASKS)) {
    const factory = FACTORIES[task.id] as (
      options?: OvercookedEnvOptions,
    ) => ReturnType<typeof createOvercookedEnv>;
    registerEnv(task.id, factory, {
      description: `Overcooked ${task.recipe} (original ${task.version}), macro-actions as text labels`,
      maxSteps: 200,
      actionSpace: 'discrete',
      gamma: PRIMITIVE_DISCOUNT,
      presets: OVERCOOKED_PRESETS,
      optimalReturn: overcookedOptimalReturn(task.id.split('/')[1]!),
    });
  }
}
