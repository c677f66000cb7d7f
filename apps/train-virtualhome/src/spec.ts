import {
  createVirtualHomeEnv,
  VIRTUALHOME_TASKS,
  type VirtualHomeTask,
} from '@poad/envs-virtualhome';
import type { AppSpec } from '@poad/trainer';

/** The unseen food-preparation variants of the paper's Table 1 (only nouns change). */
export const UNSEEN_VARIANTS = VIRTUALHOME_TASKS.filter((t) => t.startsWith('food-preparation/'));

export const virtualHomeApp: AppSpec = {
  command: 'train:virtualhome',
  family: 'virtualhome',
  summary:
    'Train a language agent on VirtualHome (food-preparation = heat a pancake, entertainment = watch TV with chips and milk).',
  tasks: ['food-preparation', 'entertainment'],
  defaultTask: 'food-preparation',
  envId: (task) => `virtualhome/${task}`,
  makeEnv: (task) => createVirtualHomeEnv(task as VirtualHomeTask),
  // envs.md: food-preparation optimum 0.95^5 (6 steps), entertainment 0.95^10 (11 steps).
  optimalReturn: (task) => (task === 'entertainment' ? 0.95 ** 10 : 0.95 ** 5),
  evalTasks: (task) =>
    task === 'food-preparation' ? ['food-preparation', ...UNSEEN_VARIANTS] : [task],
  examples: [
    'npm run train:virtualhome',
    'npm run train:virtualhome -- --algo ntpo --intra-gamma 0.9 --seed 2',
    'npm run train:virtualhome -- --task entertainment --algo twosome',
    'npm run train:virtualhome -- --algo etpo --beta 0.1 --tau 0.005 --reference base',
    'npm run train:virtualhome -- --resume runs/virtualhome-food-preparation-poad-s1-20261121-080000',
    'npm run train:virtualhome -- eval --resume runs/virtualhome-food-preparation-poad-s1-20261121-080000',
  ],
};
