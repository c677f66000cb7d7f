import { describe, expect, it } from 'vitest';
import { InputError, OptionError, UserError } from '../src/index.js';

describe('UserError', () => {
  it('is the one class every user-fixable error extends', () => {
    const option = new OptionError('--lr: expected a number');
    const input = new InputError('config.lr', 'expected a number in [0, 1]');
    expect(option).toBeInstanceOf(UserError);
    expect(input).toBeInstanceOf(UserError);
    expect(input.message).toBe('config.lr: expected a number in [0, 1]');
    expect(input.input).toBe('config.lr');
    expect(new Error('a bug')).not.toBeInstanceOf(UserError);
    expect(null).not.toBeInstanceOf(UserError);
  });

  it('keeps the ordinary instanceof test on its subclasses', () => {
    class AlgorithmConfigError extends InputError {
      override name = 'AlgorithmConfigError';
    }
    const e = new AlgorithmConfigError('config.clip', 'expected a positive number');
    expect(e).toBeInstanceOf(AlgorithmConfigError);
    expect(e).toBeInstanceOf(InputError);
    expect(e).not.toBeInstanceOf(OptionError);
    expect(new OptionError('x')).not.toBeInstanceOf(InputError);
  });

  it('recognises an error made by another copy of the package (ESM and CJS side by side)', () => {
    // Another copy defines its own classes but marks them with the same registered symbol.
    const mark = Symbol.for('@poad/config:user-error');
    class OtherCopyError extends Error {
      get [mark]() {
        return true;
      }
    }
    expect(new OtherCopyError('from the other copy')).toBeInstanceOf(UserError);
    class Unmarked extends Error {}
    expect(new Unmarked('no mark')).not.toBeInstanceOf(UserError);
  });
});
