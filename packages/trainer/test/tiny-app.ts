import { metricsRows as devKitRows } from '@poad/dev-kit';
import {
  createVirtualHomeEnv,
  VIRTUALHOME_PRESETS,
  type VirtualHomeTask,
} from '@poad/envs-virtualhome';
import type { AppSpec } from '../src/app.js';

/** A VirtualHome training app on food-preparation alone, as the tests drive it through runCli. */
export const tinyVirtualHomeApp: AppSpec = {
  command: 'train:virtualhome',
  presets: VIRTUALHOME_PRESETS,
  summary: 'test',
  tasks: ['food-preparation'],
  defaultTask: 'food-preparation',
  envId: (t) => `virtualhome/${t}`,
  makeEnv: (t) => createVirtualHomeEnv(t as VirtualHomeTask),
  evalTasks: (t) => [t],
  examples: [],
};

/** A run's metrics.jsonl rows without the wall-clock fields (what must repeat exactly). */
export const metricsRows = (dir: string) => devKitRows(dir, { timings: false });
