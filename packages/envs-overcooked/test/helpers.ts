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

/**
 * The macro-actions of one chopping subtask: pick up `food`, put it on the cutting board
 * (`board`: 'first' or 'second' where there are two), chop it.
 */
export function chopOnBoard(food: string, board?: 'first' | 'second'): string[] {
  const on = board === undefined ? 'the cutting board' : `the ${board} cutting board`;
  return [`pick up the ${food}`, `put the ${food} on ${on}`, `chop the ${food}`];
}

/** The optimal tomato-salad episode (envs.md O-2): 28 primitive steps. */
export const OPTIMAL_TOMATO_SALAD: readonly string[] = [
  ...chopOnBoard('tomato'),
  'pick up the tomato',
  'take the bowl',
  'serve the dish',
];
