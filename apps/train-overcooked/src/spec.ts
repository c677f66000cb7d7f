import { createOvercookedEnv, type OvercookedTaskName } from '@poad/envs-overcooked';
import type { AppSpec } from '@poad/trainer';

export const overcookedApp: AppSpec = {
  command: 'train:overcooked',
  family: 'overcooked',
  summary:
    'Train a language agent on Overcooked (tomato-salad, tomato-lettuce-salad) with macro-actions.',
  tasks: ['tomato-salad', 'tomato-lettuce-salad'],
  defaultTask: 'tomato-salad',
  envId: (task) => `overcooked/${task}`,
  makeEnv: (task) => createOvercookedEnv(task as OvercookedTaskName),
  // envs.md: tomato-salad optimum 0.9205 (28 primitive steps); tomato-lettuce-salad best known 0.9477.
  optimalReturn: (task) => (task === 'tomato-salad' ? 0.9205 : 0.9477),
  evalTasks: (task) => [task],
  examples: [
    'npm run train:overcooked',
    'npm run train:overcooked -- --task tomato-lettuce-salad --algo twosome',
    'npm run train:overcooked -- --resume runs/overcooked-tomato-salad-poad-s1-20261121-080000',
  ],
};
