/**
 * Bad command-line, config-file or config-object input: the message names the option and says
 * what is valid. Thrown before any work starts.
 */
export class OptionError extends Error {
  override readonly name: string = 'OptionError';
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
