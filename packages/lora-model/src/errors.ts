import { InputError, UserError } from '@poad/config';

/**
 * Thrown when a call into the model gets input it cannot use (token ids out of range, ragged
 * batches, empty prompts, unknown options). The message names the argument and how to fix it.
 */
export class ModelInputError extends InputError {
  override name = 'ModelInputError';
}

/**
 * Thrown when a model configuration cannot be used (missing or inconsistent sizes, unsupported
 * features). The message names the field.
 */
export class ModelConfigError extends UserError {
  /** The configuration field at fault, e.g. `num_key_value_heads`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(`config.${field}: ${message}`);
    this.name = 'ModelConfigError';
    this.field = field;
  }
}
