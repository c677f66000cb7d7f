import { ppoConfigSchema } from '@poad/ppo';
import { describe, expect, it } from 'vitest';
import { GroupConfigError, groupConfigSchema, resolveGroupConfig } from '../src/index.js';

describe('the group config schema', () => {
  it("shares @poad/ppo's sampler, update and optimiser fields (same ranges), with its own defaults", () => {
    for (const k of [
      'lr',
      'clip',
      'epochs',
      'numMinibatches',
      'tokenSpace',
      'maxGradNorm',
    ] as const) {
      const { description: _a, ...ours } = groupConfigSchema[k];
      const { description: _b, ...theirs } = ppoConfigSchema[k];
      expect(ours, k).toEqual(theirs);
    }
    const c = resolveGroupConfig();
    expect(c).toMatchObject({
      estimator: 'grpo',
      groups: 2,
      groupSize: 4,
      normalise: 'std',
      omega: 1,
      klCoef: 0,
      entropyCoef: 0,
      numSteps: 32,
    });
    for (const k of ['criticLr', 'gaeLambda', 'valueLossCoef', 'targetKl'])
      expect(k in groupConfigSchema, k).toBe(false);
  });

  it('names a bad field, and passes a resolved config through', () => {
    expect(() => resolveGroupConfig({ groupSize: 1 })).toThrow(GroupConfigError);
    expect(() => resolveGroupConfig({ groupSize: 1 })).toThrow(
      'config.groupSize: 1 is below the minimum 2',
    );
    expect(() => resolveGroupConfig({ criticLr: 1 } as never)).toThrow(
      /config\.criticLr: unknown option/,
    );
    const c = resolveGroupConfig({ estimator: 'gigpo', omega: 0.5 });
    expect(resolveGroupConfig(c)).toBe(c);
  });
});
