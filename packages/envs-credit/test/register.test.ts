import { envSpec, listEnvs, makeEnv, UnknownEnvError } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('registerCreditEnvs', () => {
  it('registers nothing on import, then the eight ids with their metadata, idempotently', async () => {
    expect(typeof api.createCreditEnv).toBe('function');
    expect(listEnvs().filter((id) => id.startsWith('credit/'))).toEqual([]);
    expect(() => makeEnv('credit/loop')).toThrow(UnknownEnvError);
    const ids = api.registerCreditEnvs();
    expect(ids).toEqual(api.CREDIT_TASKS.map((t) => `credit/${t}`));
    expect(api.registerCreditEnvs()).toEqual(ids);
    expect(listEnvs()).toEqual(expect.arrayContaining(ids));
    const want: Record<string, [number, number]> = {
      // maxSteps and the optimal logged return
      'credit/key-token': [1, 1],
      'credit/key-token-long': [1, 1],
      'credit/delayed': [5, 0.95 ** 4],
      'credit/delayed-long': [13, 0.95 ** 12],
      'credit/loop': [12, 0.95],
      'credit/loop-long': [14, 0.95 ** 3],
      'credit/risky': [3, 0.95 ** 2],
      'credit/risky-long': [8, 0.95 ** 7],
    };
    for (const id of ids) {
      const meta = envSpec(id)!.meta;
      expect(meta).toMatchObject({
        maxSteps: want[id]![0],
        actionSpace: 'discrete',
        gamma: 0.95,
        presets: api.CREDIT_PRESETS,
      });
      expect(meta.optimalReturn).toBeCloseTo(want[id]![1], 12);
      expect(meta.description).toMatch(/^Credit: /);
    }
    const env = makeEnv('credit/risky', { maxSteps: 1 });
    expect(env.id).toBe('credit/risky');
    await env.reset();
    expect((await env.step('walk to the next room')).truncated).toBe(true);
  });

  it('declares labelled actions and seeded resets, with a small default preset for every method', () => {
    const p = api.CREDIT_PRESETS;
    expect(p.traits).toEqual({ actions: 'labels', seededResets: true });
    // The group methods' episodes are never cut: their cap is above every task's step limit.
    const longest = Math.max(...api.CREDIT_TASKS.map((t) => api.creditMdp(t).maxSteps));
    for (const algo of ['grpo', 'rloo', 'gigpo'])
      expect(p.presets.small!.byAlgorithm![algo]!.numSteps as number).toBeGreaterThan(longest);
    expect(p.default).toBe('small');
    expect(p.presets.small!.values).toMatchObject({ envs: 8, envSteps: 4096, gamma: 0.95 });
    expect(p.presets.small!.source).toMatch(/not yet tuned/);
  });
});
