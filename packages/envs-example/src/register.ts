import { registerEnv } from '@poad/envs-core';
import { createTreasureEnv } from './treasure-env.js';

/** Registers `example/treasure` in the `@poad/envs-core` registry. Safe to call twice. */
export function registerExampleEnvs(): string[] {
  registerEnv('example/treasure', createTreasureEnv, {
    description: 'Find the treasure buried in one room of a corridor',
    maxSteps: 10,
    actionSpace: 'discrete',
    gamma: 0.9,
  });
  return ['example/treasure'];
}
