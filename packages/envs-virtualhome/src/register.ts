import { type EnvFactory, registerEnv } from '@poad/envs-core';
import { createVirtualHomeEnv, type VirtualHomeOptions } from './env.js';
import { VIRTUALHOME_PRESETS, virtualHomeOptimalReturn } from './presets.js';
import { UNSEEN_VARIANTS, VIRTUALHOME_TASKS, type VirtualHomeTask } from './tasks.js';

const UNSEEN = UNSEEN_VARIANTS.map((t) => `virtualhome/${t}`);

const factories = new Map<VirtualHomeTask, EnvFactory<VirtualHomeOptions>>(
  VIRTUALHOME_TASKS.map((task) => [
    task,
    (options?: VirtualHomeOptions) => createVirtualHomeEnv(task, options),
  ]),
);

/**
 * Registers `virtualhome/<task>` for every task in the `@poad/envs-core` registry, so that
 * `makeEnv('virtualhome/food-preparation')` works, with the training presets, each task's optimal
 * return and (for food-preparation) its unseen variants. Safe to call more than once. Returns
 * the ids.
 */
export function registerVirtualHomeEnvs(): string[] {
  const ids: string[] = [];
  for (const task of VIRTUALHOME_TASKS) {
    const id = `virtualhome/${task}`;
    registerEnv(id, factories.get(task) as EnvFactory<VirtualHomeOptions>, {
      description:
        task === 'entertainment'
          ? 'VirtualHome entertainment: chips and milk, TV on, sit on the sofa'
          : `VirtualHome food preparation (${task})`,
      maxSteps: 50,
      actionSpace: 'discrete',
      gamma: 0.95,
      presets: VIRTUALHOME_PRESETS,
      optimalReturn: virtualHomeOptimalReturn(task),
      ...(task === 'food-preparation' ? { unseenVariants: UNSEEN } : {}),
    });
    ids.push(id);
  }
  return ids;
}
