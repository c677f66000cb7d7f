import { InputError } from '@poad/config';
import { afterEach, describe, expect, it } from 'vitest';
import { DuplicateEnvError, EnvArgumentError, UnknownEnvError } from '../src/errors.js';
import { envSpec, listEnvs, makeEnv, registerEnv, unregisterEnv } from '../src/registry.js';
import { GuessEnv, type GuessEnvOptions } from './guess-env.js';

const made: string[] = [];
const guess = (options?: GuessEnvOptions) => new GuessEnv(options);
const other = () => new GuessEnv();

afterEach(() => {
  for (const id of made.splice(0)) unregisterEnv(id);
});

function register(id: string): void {
  made.push(id);
  registerEnv(id, guess, { description: 'guess a number', maxSteps: 3 });
}

describe('registry', () => {
  it('makes a fresh env per call and passes the options through', async () => {
    register('test/guess');
    const a = makeEnv<GuessEnvOptions>('test/guess', { maxSteps: 1 });
    const b = makeEnv('test/guess');
    expect(a).not.toBe(b);
    expect(a.id).toBe('test/guess');
    await a.reset({ seed: 1 });
    const step = await a.step('guess 4');
    const target = step.reward === 1;
    // maxSteps 1: the first guess always ends the episode
    expect(step.terminated || step.truncated).toBe(true);
    expect(step.terminated).toBe(target);
  });

  it('lists ids sorted and reports the metadata', () => {
    register('zeta/b');
    register('alpha/a');
    const ids = listEnvs();
    expect(ids.indexOf('alpha/a')).toBeLessThan(ids.indexOf('zeta/b'));
    expect(envSpec('alpha/a')).toEqual({
      id: 'alpha/a',
      meta: { description: 'guess a number', maxSteps: 3 },
    });
    expect(envSpec('nope/none')).toBeUndefined();
  });

  it('throws UnknownEnvError listing the registered ids', () => {
    register('test/one');
    register('test/two');
    let err: unknown;
    try {
      makeEnv('test/three');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnknownEnvError);
    const unknown = err as UnknownEnvError;
    expect(unknown.envId).toBe('test/three');
    expect(unknown.registeredIds).toEqual(expect.arrayContaining(['test/one', 'test/two']));
    expect(unknown.message).toContain('test/one, test/two');
  });

  it('is idempotent for the same factory and refuses a different one unless overridden', () => {
    register('test/dup');
    expect(() => registerEnv('test/dup', guess)).not.toThrow();
    expect(() => registerEnv('test/dup', other)).toThrow(DuplicateEnvError);
    registerEnv('test/dup', other, { override: true, description: 'replaced' });
    expect(envSpec('test/dup')?.meta).toEqual({ description: 'replaced' });
  });

  it('rejects malformed ids and factories', () => {
    expect(() => registerEnv('', guess)).toThrow(EnvArgumentError);
    expect(() => registerEnv('has space', guess)).toThrow(/registerEnv\(id\)/);
    expect(() => registerEnv('/leading', guess)).toThrow(EnvArgumentError);
    // A user's error naming its input: the argument and `input` are the same.
    expect(() => registerEnv('', guess)).toThrow(InputError);
    expect(() => registerEnv('', guess)).toThrow(
      expect.objectContaining({ argument: 'registerEnv(id)', input: 'registerEnv(id)' }),
    );
    expect(() => registerEnv('ok/id', 42 as unknown as () => GuessEnv)).toThrow(/factory/);
  });

  it('unregisters', () => {
    register('test/gone');
    expect(unregisterEnv('test/gone')).toBe(true);
    expect(unregisterEnv('test/gone')).toBe(false);
    expect(() => makeEnv('test/gone')).toThrow(UnknownEnvError);
  });
});
