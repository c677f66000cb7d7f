import { checkEnv } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createCreditEnv } from '../src/env.js';
import { CREDIT_TASKS, creditMdp } from '../src/tasks.js';

describe('conformance kit', () => {
  it.each(CREDIT_TASKS)('credit/%s passes checkEnv', async (task) => {
    const { maxSteps } = creditMdp(task);
    const report = await checkEnv(() => createCreditEnv(task), {
      maxSteps,
      episodes: 12,
      benchmarkSteps: 500,
    });
    expect(report.envId).toBe(`credit/${task}`);
    expect(report.checks).toEqual(
      expect.arrayContaining([
        'determinism',
        'invalid-action',
        'episode-over',
        'not-reset',
        'labels',
        'episode-info',
      ]),
    );
    expect(report.longestEpisode).toBeLessThanOrEqual(maxSteps);
  });

  it('passes with a shorter step limit', async () => {
    const report = await checkEnv(() => createCreditEnv('loop', { maxSteps: 3 }), {
      maxSteps: 3,
      episodes: 8,
      benchmarkSteps: 0,
    });
    expect(report.checks).toContain('determinism');
  });
});
