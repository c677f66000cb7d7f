/**
 * Thrown when a trainer option, preset override or input has an invalid value. The message names
 * the offending input and says how to fix it.
 */
export class PpoConfigError extends Error {
  /** The input that was rejected, e.g. `config.numMinibatches`. */
  readonly input: string;

  constructor(input: string, problem: string) {
    super(`${input}: ${problem}`);
    this.name = 'PpoConfigError';
    this.input = input;
  }
}

/** Thrown when a policy (or vectorised env) returns data of the wrong shape or content. */
export class PolicyContractError extends Error {
  /** The method whose result broke the contract, e.g. `policy.encodeContinuations`. */
  readonly method: string;

  constructor(method: string, problem: string) {
    super(`${method}: ${problem}`);
    this.name = 'PolicyContractError';
    this.method = method;
  }
}

/** Thrown by `restore` when a checkpoint does not match the trainer it is loaded into. */
export class CheckpointMismatchError extends Error {
  constructor(problem: string) {
    super(`checkpoint: ${problem} Load a checkpoint saved by a trainer with the same policy.`);
    this.name = 'CheckpointMismatchError';
  }
}
