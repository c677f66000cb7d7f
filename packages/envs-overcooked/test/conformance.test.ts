import { checkEnv, envSpec, listEnvs, makeEnv } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createOvercookedEnv, registerOvercookedEnvs } from '../src/index.js';

describe('conformance kit', () => {
  for (const task of ['tomato-salad', 'tomato-lettuce-salad'] as const) {
    it(`overcooked/${task} passes checkEnv`, async () => {
      const report = await checkEnv(() => createOvercookedEnv(task), {
        maxSteps: 200,
        episodes: 4,
        seed: 3,
        benchmarkSteps: 500,
      });
      expect(report.envId).toBe(`overcooked/${task}`);
      for (const check of [
        'reset',
        'labels',
        'rewards',
        'episode-limit',
        'episode-info',
        'invalid-action',
        'episode-over',
        'not-reset',
        'determinism',
        'close',
      ]) {
        expect(report.checks).toContain(check);
      }
      expect(report.longestEpisode).toBeLessThanOrEqual(200);
      expect(report.stepsPerSecond).toBeGreaterThan(0);
    });
  }
});

describe('registry', () => {
  it('registers both ids (idempotently) and makeEnv builds working envs', async () => {
    registerOvercookedEnvs();
    registerOvercookedEnvs();
    expect(listEnvs()).toEqual(
      expect.arrayContaining(['overcooked/tomato-salad', 'overcooked/tomato-lettuce-salad']),
    );
    expect(envSpec('overcooked/tomato-salad')?.meta.maxSteps).toBe(200);
    const env = makeEnv('overcooked/tomato-lettuce-salad', { rewards: { subtask: 0.5 } });
    expect(env.id).toBe('overcooked/tomato-lettuce-salad');
    const first = await env.reset({ seed: 1 });
    expect(first.actions).toHaveLength(8);
    await env.close();
  });
});
