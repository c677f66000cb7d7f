import {
  createOvercookedEnv,
  OVERCOOKED_PRESETS,
  type OvercookedTaskName,
  overcookedOptimalReturn,
} from '@poad/envs-overcooked';
import type { AppSpec } from '@poad/trainer';

/** `npm run train:overcooked`: the two salad tasks with their presets. */
export const overcookedApp: AppSpec = {
  command: 'train:overcooked',
  summary:
    'Train a language agent on Overcooked (tomato-salad, tomato-lettuce-salad) with macro-actions.',
  tasks: ['tomato-salad', 'tomato-lettuce-salad'],
  defaultTask: 'tomato-salad',
  envId: (task) => `overcooked/${task}`,
  makeEnv: (task) => createOvercookedEnv(task as OvercookedTaskName),
  presets: OVERCOOKED_PRESETS,
  optimalReturn: overcookedOptimalReturn,
  evalTasks: (task) => [task],
  examples: [
    'npm run train:overcooked',
    'npm run train:overcooked -- --task tomato-lettuce-salad --algo twosome',
    'npm run train:overcooked -- --resume runs/overcooked-tomato-salad-poad-s1-20261121-080000',
  ],
};
