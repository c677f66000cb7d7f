import {
  createVirtualHomeEnv,
  UNSEEN_VARIANTS,
  VIRTUALHOME_PRESETS,
  type VirtualHomeTask,
  virtualHomeOptimalReturn,
} from '@poad/envs-virtualhome';
import type { AppSpec } from '@poad/trainer';

/** `npm run train:virtualhome`: the VirtualHome tasks with their presets and unseen variants. */
export const virtualHomeApp: AppSpec = {
  command: 'train:virtualhome',
  summary:
    'Train a language agent on VirtualHome (food-preparation = heat a pancake, entertainment = watch TV with chips and milk).',
  tasks: ['food-preparation', 'entertainment'],
  defaultTask: 'food-preparation',
  envId: (task) => `virtualhome/${task}`,
  makeEnv: (task) => createVirtualHomeEnv(task as VirtualHomeTask),
  presets: VIRTUALHOME_PRESETS,
  optimalReturn: virtualHomeOptimalReturn,
  evalTasks: (task) =>
    task === 'food-preparation' ? ['food-preparation', ...UNSEEN_VARIANTS] : [task],
  examples: [
    'npm run train:virtualhome',
    'npm run train:virtualhome -- --algo ntpo --intra-gamma 0.9 --seed 2',
    'npm run train:virtualhome -- --task entertainment --algo twosome',
    'npm run train:virtualhome -- --algo etpo --beta 0.1 --tau 0.005 --reference base',
    'npm run train:virtualhome -- --preset paper --num-minibatches 4 --lr 1e-5',
    'npm run train:virtualhome -- --resume runs/virtualhome-food-preparation-poad-s1-20261121-080000',
    'npm run train:virtualhome -- eval --resume runs/virtualhome-food-preparation-poad-s1-20261121-080000',
  ],
};
