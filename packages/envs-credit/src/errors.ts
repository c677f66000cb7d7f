/**
 * Thrown when an argument of an `@poad/envs-credit` function is malformed: an unknown task, a
 * policy that is not a distribution over a state's labels, a malformed MDP, series of different
 * lengths. The message names the argument and says what a valid value looks like.
 */
export class CreditArgumentError extends Error {
  override readonly name = 'CreditArgumentError';
  constructor(
    /** The argument at fault, e.g. `policyAdvantages(pi)` or `creditMdp(task)`. */
    readonly argument: string,
    message: string,
  ) {
    super(`${argument}: ${message}`);
  }
}
