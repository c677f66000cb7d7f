import type { TextStep } from '@poad/envs-core';
import type { VirtualHomeEnv } from '../src/env.js';

/** Indices (into the task's full label list) of the labels offered by a step. */
export function indices(env: VirtualHomeEnv, step: TextStep): number[] {
  return (step.actions ?? []).map((label) => env.allLabels.indexOf(label));
}

/** Steps by action index and returns every resulting step. */
export function run(env: VirtualHomeEnv, actions: readonly number[]): TextStep[] {
  return actions.map((a) => env.stepSync(env.allLabels[a] as string));
}
