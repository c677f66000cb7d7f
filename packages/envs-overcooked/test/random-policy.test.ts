import { createRng } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createOvercookedEnv } from '../src/index.js';

interface Stats {
  n: number;
  mean: number;
  sd: number;
}

function stats(values: readonly number[]): Stats {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1);
  return { n, mean, sd: Math.sqrt(variance) };
}

/**
 * Tolerance for comparing our sample mean with a published mean from `refN` episodes of the
 * original: both are estimates of the same expectation, so their difference has standard error
 * sd * sqrt(1/n + 1/refN) (sd estimated from our sample). We allow 4 standard errors: a correct
 * port fails with probability below 1e-4 per comparison, while a change of the dynamics that
 * moves the mean by a few percent of its spread is caught. The seed is fixed, so the test is
 * deterministic; the tolerance only decides what counts as "the same dynamics".
 */
function tolerance(s: Stats, refN: number): number {
  return 4 * s.sd * Math.sqrt(1 / s.n + 1 / refN);
}

function runRandom(task: 'tomato-salad' | 'tomato-lettuce-salad', episodes: number, seed: number) {
  const env = createOvercookedEnv(task);
  const rng = createRng(seed);
  const success: number[] = [];
  const returns: number[] = [];
  const lengths: number[] = [];
  const macros: number[] = [];
  for (let e = 0; e < episodes; e++) {
    let step = env.resetSync({ seed: e });
    while (!step.terminated && !step.truncated) {
      step = env.stepSync(rng.choice(step.actions as readonly string[]));
    }
    success.push(step.info.success ? 1 : 0);
    returns.push(step.info.discountedReturn as number);
    lengths.push(step.info.length as number);
    macros.push(step.info.macroSteps as number);
  }
  return {
    success: stats(success),
    returns: stats(returns),
    lengths: stats(lengths),
    macros: stats(macros),
  };
}

const REF_EPISODES = 2000;

describe('uniform-random policy statistics (envs.md O-6, O-9)', () => {
  it('O-6 tomato salad: success 45.6%, mean return -0.0895, 164 primitive steps, 55.7 macros', () => {
    const r = runRandom('tomato-salad', 3000, 6);
    expect(Math.abs(r.success.mean - 0.456)).toBeLessThan(tolerance(r.success, REF_EPISODES));
    expect(Math.abs(r.returns.mean - -0.0895)).toBeLessThan(tolerance(r.returns, REF_EPISODES));
    expect(Math.abs(r.lengths.mean - 164)).toBeLessThan(tolerance(r.lengths, REF_EPISODES) + 0.5);
    expect(Math.abs(r.macros.mean - 55.7)).toBeLessThan(tolerance(r.macros, REF_EPISODES) + 0.05);
  });

  it('O-9 tomato-lettuce salad: success 0.8%, mean return -0.2266, 202 primitive steps', () => {
    const r = runRandom('tomato-lettuce-salad', 3000, 9);
    expect(Math.abs(r.success.mean - 0.008)).toBeLessThan(tolerance(r.success, REF_EPISODES));
    expect(Math.abs(r.returns.mean - -0.2266)).toBeLessThan(tolerance(r.returns, REF_EPISODES));
    // The published mean length is rounded to an integer, hence the extra 0.5.
    expect(Math.abs(r.lengths.mean - 202)).toBeLessThan(tolerance(r.lengths, REF_EPISODES) + 0.5);
  });
});
