import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createVirtualHomeEnv, type VirtualHomeTask } from '@poad/envs-virtualhome';
import type { AppSpec } from '../src/app.js';

/** A VirtualHome training app on food-preparation alone, as the tests drive it through runCli. */
export const tinyVirtualHomeApp: AppSpec = {
  command: 'train:virtualhome',
  family: 'virtualhome',
  summary: 'test',
  tasks: ['food-preparation'],
  defaultTask: 'food-preparation',
  envId: (t) => `virtualhome/${t}`,
  makeEnv: (t) => createVirtualHomeEnv(t as VirtualHomeTask),
  evalTasks: (t) => [t],
  examples: [],
};

/** A run's metrics.jsonl rows without the wall-clock fields (what must repeat exactly). */
export function metricsRows(dir: string) {
  return readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const {
        wallSeconds,
        rolloutEnvStepsPerSec,
        rolloutActSeconds,
        rolloutValueSeconds,
        rolloutEnvSeconds,
        rolloutTokensPerSec,
        updateTokensPerSec,
        ...rest
      } = JSON.parse(l);
      return rest;
    });
}
