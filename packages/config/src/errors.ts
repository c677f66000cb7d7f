/** Marks every {@link UserError}, whichever copy of this package made it (ESM, CJS, a bundle). */
const USER_ERROR = Symbol.for('@poad/config:user-error');

/**
 * An error the user can fix: a bad option, config or config file, a model that cannot be found
 * or read, a run directory another process holds, a backend the machine cannot give, a bad
 * environment argument. The message names the input and says how to fix it; command lines print
 * it on one line and exit with code 2 (no stack trace). Every package's errors of this kind
 * extend it, so `err instanceof UserError` is the one test, even across copies of this package.
 */
export class UserError extends Error {
  override name: string = 'UserError';

  /** True for every instance, in any copy of this package (see {@link UserError}). */
  get [USER_ERROR](): true {
    return true;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // A subclass keeps the ordinary prototype test; UserError itself also recognises the mark.
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class tested against (subclasses inherit this method)
    if (this !== UserError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [USER_ERROR]?: unknown })[USER_ERROR] === true
    );
  }
}

/**
 * A {@link UserError} about one named input (`config.lr`, `policy.actorVariables`, `--csv`, …):
 * the message is `<input>: <problem>`.
 */
export class InputError extends UserError {
  override name: string = 'InputError';

  constructor(
    /** The input at fault, as the message names it. */
    readonly input: string,
    problem: string,
  ) {
    super(`${input}: ${problem}`);
  }
}

/**
 * Bad command-line, config-file or config-object input: the message names the option and says
 * what is valid. Thrown before any work starts.
 */
export class OptionError extends UserError {
  override name: string = 'OptionError';
  /** The field at fault (camelCase), when one is. */
  readonly option: string | undefined;
  /** What is wrong with it, without the field's name. */
  readonly reason: string;
  /** The field as the message names it, e.g. `command line --lr` or `config.lr`. */
  readonly label: string | undefined;

  constructor(message: string, detail: { option?: string; reason?: string; label?: string } = {}) {
    super(message);
    this.option = detail.option;
    this.reason = detail.reason ?? message;
    this.label = detail.label;
  }
}
