import { EnvArgumentError } from '@poad/envs-core';

/**
 * Thrown when an argument of an `@poad/envs-credit` function is malformed: an unknown task, a
 * policy that is not a distribution over a state's labels, a malformed MDP, series of different
 * lengths. The message names the argument and says what a valid value looks like.
 */
export class CreditArgumentError extends EnvArgumentError {
  override readonly name = 'CreditArgumentError';
}
