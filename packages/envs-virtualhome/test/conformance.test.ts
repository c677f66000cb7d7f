import { checkEnv } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createVirtualHomeEnv } from '../src/env.js';
import { VIRTUALHOME_TASKS } from '../src/tasks.js';

describe('conformance kit', () => {
  it.each(VIRTUALHOME_TASKS)('virtualhome/%s passes checkEnv', async (task) => {
    const report = await checkEnv(() => createVirtualHomeEnv(task), {
      maxSteps: 50,
      episodes: 6,
      benchmarkSteps: 500,
    });
    expect(report.envId).toBe(`virtualhome/${task}`);
    expect(report.checks).toEqual(
      expect.arrayContaining(['determinism', 'invalid-action', 'episode-over', 'not-reset']),
    );
    expect(report.longestEpisode).toBeLessThanOrEqual(50);
  });

  it('passes with every quirk fix switched on', async () => {
    const fixes = { deadlock: true, sittingTrap: true, offeredNoOps: true, teleport: true };
    for (const task of ['food-preparation', 'entertainment'] as const) {
      const report = await checkEnv(() => createVirtualHomeEnv(task, { fixes }), {
        maxSteps: 50,
        episodes: 4,
        benchmarkSteps: 0,
      });
      expect(report.checks).toContain('determinism');
    }
  });
});
