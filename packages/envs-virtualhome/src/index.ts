export { ENTERTAINMENT_ACTIONS } from './entertainment.js';
export type { VirtualHomeOptions, VirtualHomeStepInfo } from './env.js';
export { createVirtualHomeEnv, VirtualHomeEnv } from './env.js';
export { FOOD_ACTIONS } from './food-preparation.js';
export { VIRTUALHOME_PRESETS, virtualHomeOptimalReturn } from './presets.js';
export { registerVirtualHomeEnvs } from './register.js';
export type { FoodNouns, VirtualHomeTask } from './tasks.js';
export {
  ENTERTAINMENT_LABELS,
  foodLabels,
  foodNouns,
  isVirtualHomeTask,
  UNSEEN_VARIANTS,
  VIRTUALHOME_TASKS,
} from './tasks.js';
