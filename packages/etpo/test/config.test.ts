import { defaultConfig, ppoConfigSchema } from '@poad/ppo';
import { describe, expect, it } from 'vitest';
import { EtpoArgumentError, etpoConfigSchema, resolveEtpoConfig } from '../src/index.js';

describe("ETPO's config schema", () => {
  it("shares PPO's rollout, sampler and optimiser fields with the same defaults and ranges", () => {
    const c = resolveEtpoConfig();
    for (const k of [
      'numSteps',
      'gamma',
      'lr',
      'criticLr',
      'epochs',
      'numMinibatches',
      'topK',
    ] as const) {
      expect(c[k]).toBe(defaultConfig[k]);
      const { description: _a, ...ours } = etpoConfigSchema[k];
      const { description: _b, ...theirs } = ppoConfigSchema[k];
      expect(ours).toEqual(theirs);
    }
    expect(c).toMatchObject({
      beta: 0.1,
      tau: 0.005,
      reference: 'base',
      optimizer: 'adamw',
      policyLoss: 'objective',
      criticScale: 1,
    });
  });

  it("has none of PPO's own fields: the clip, GAE λ, entropy bonus, KL stop, accumulation", () => {
    for (const k of [
      'algorithm',
      'clip',
      'gaeLambda',
      'entropyCoef',
      'targetKl',
      'gradAccumulation',
    ])
      expect(k in etpoConfigSchema).toBe(false);
    expect(() => resolveEtpoConfig({ clip: 0.2 } as never)).toThrow(EtpoArgumentError);
    expect(() => resolveEtpoConfig({ clip: 0.2 } as never)).toThrow(/config\.clip: unknown option/);
  });

  it('names the field a bad value breaks, and passes a resolved config through', () => {
    expect(() => resolveEtpoConfig({ tau: 2 })).toThrow('config.tau: 2 is above the maximum 1');
    expect(() => resolveEtpoConfig({ optimizer: 'sgd' as 'lion' })).toThrow(
      /config\.optimizer: "sgd" is not one of: adamw, lion/,
    );
    expect(() => resolveEtpoConfig({ policyLoss: 'mean' as 'released' })).toThrow(
      /config\.policyLoss: "mean" is not one of: objective, released/,
    );
    expect(() => resolveEtpoConfig({ criticScale: 0 })).toThrow(/config\.criticScale: 0 is below/);
    expect(() => resolveEtpoConfig({ criticScale: 2 })).toThrow(
      'config.criticScale: 2 is above the maximum 1',
    );
    expect(() => resolveEtpoConfig({ criticScale: 'x' as unknown as number })).toThrow(
      /config\.criticScale/,
    );
    expect(resolveEtpoConfig({ policyLoss: 'released', criticScale: 0.067 })).toMatchObject({
      policyLoss: 'released',
      criticScale: 0.067,
    });
    const c = resolveEtpoConfig({ beta: 0.01, optimizer: 'lion' });
    expect(resolveEtpoConfig(c)).toBe(c);
  });
});
