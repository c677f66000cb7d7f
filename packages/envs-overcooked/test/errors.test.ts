import {
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
} from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createOvercookedEnv } from '../src/index.js';
import { chopOnBoard } from './helpers.js';

describe('errors', () => {
  it('rejects unknown tasks and malformed options, naming the input', () => {
    expect(() => createOvercookedEnv('pasta')).toThrow(EnvArgumentError);
    expect(() => createOvercookedEnv('pasta')).toThrow(/tomato-salad/);
    expect(() => createOvercookedEnv('tomato-salad', { maxPrimitiveSteps: 0 })).toThrow(
      /maxPrimitiveSteps/,
    );
    expect(() => createOvercookedEnv('tomato-salad', { rewards: { step: Number.NaN } })).toThrow(
      /rewards\.step/,
    );
    expect(() =>
      // @ts-expect-error: an unknown reward name
      createOvercookedEnv('tomato-salad', { rewards: { bonus: 1 } }),
    ).toThrow(/rewards\.bonus/);
    expect(() =>
      // @ts-expect-error: an unknown fix
      createOvercookedEnv('tomato-salad', { fixes: { everything: true } }),
    ).toThrow(/fixes\.everything/);
  });

  it('accepts the registry id as the task name', () => {
    expect(createOvercookedEnv('overcooked/tomato-lettuce-salad').id).toBe(
      'overcooked/tomato-lettuce-salad',
    );
  });

  it('throws NotResetError, InvalidActionError and EpisodeOverError on misuse', async () => {
    const env = createOvercookedEnv('tomato-salad');
    await expect(env.step('take the bowl')).rejects.toBeInstanceOf(NotResetError);
    const first = await env.reset({ seed: 5 });
    const err = await env.step('put the tomato in the bowl').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidActionError);
    expect((err as InvalidActionError).validActions).toEqual(first.actions);
    await expect(env.reset({ seed: 1.5 })).rejects.toBeInstanceOf(EnvArgumentError);
    await env.reset();
    for (const label of [...chopOnBoard('tomato'), 'pick up the tomato', 'take the bowl']) {
      await env.step(label);
    }
    const end = await env.step('serve the dish');
    expect(end.terminated).toBe(true);
    await expect(env.step('serve nothing')).rejects.toBeInstanceOf(EpisodeOverError);
    await env.close();
    await env.close();
  });

  it('every seed gives the same episode start (the environment has no randomness)', async () => {
    const env = createOvercookedEnv('tomato-lettuce-salad');
    const a = await env.reset({ seed: 1 });
    const b = await env.reset({ seed: 99 });
    expect(b).toEqual(a);
  });
});
