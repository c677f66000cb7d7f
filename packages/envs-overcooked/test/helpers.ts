import type { TextStep } from '@poad/envs-core';
import { expect } from 'vitest';
import {
  createOvercookedEnv,
  type OvercookedEnv,
  type OvercookedEnvOptions,
} from '../src/index.js';

/**
 * Asserts that `actual` rounds to `printed`, a value written with `decimals` decimals in the
 * specification (so a 6-decimal value is matched to within 5e-7, i.e. better than 1e-6).
 */
export function expectRounded(actual: number, printed: number, decimals: number): void {
  const half = 0.5 * 10 ** -decimals;
  expect(Math.abs(actual - printed)).toBeLessThanOrEqual(half + 1e-12);
}

/** A freshly reset environment and its first step. */
export function fresh(
  task: 'tomato-salad' | 'tomato-lettuce-salad',
  options?: OvercookedEnvOptions,
): { env: OvercookedEnv; first: TextStep } {
  const env = createOvercookedEnv(task, options);
  return { env, first: env.resetSync({ seed: 0 }) };
}

/** Plays labels in order and returns every step. */
export function play(env: OvercookedEnv, labels: readonly string[]): TextStep[] {
  return labels.map((label) => env.stepSync(label));
}
