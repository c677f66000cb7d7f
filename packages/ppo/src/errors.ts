import { InputError, UserError } from '@poad/config';

/**
 * Thrown when a trainer option, preset override or input has an invalid value. The message names
 * the offending input (its `input`, e.g. `config.numMinibatches`) and says how to fix it.
 */
export class PpoConfigError extends InputError {
  override name = 'PpoConfigError';
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

/** Thrown by `setState` when a checkpoint does not match the trainer it is loaded into. */
export class CheckpointMismatchError extends UserError {
  override name = 'CheckpointMismatchError';
  constructor(problem: string) {
    super(`checkpoint: ${problem} Load a checkpoint saved by a trainer with the same policy.`);
  }
}

/**
 * Thrown by `ppoUpdate` (and so `PpoTrainer.iterate`) when `maxNonFiniteSkips` consecutive
 * minibatches had a non-finite loss or gradient norm. Their optimiser steps were skipped, so the
 * weights and optimiser state are those of the last finite step.
 */
export class NonFiniteUpdateError extends Error {
  /** Consecutive minibatches skipped. */
  readonly streak: number;
  /** What was not finite in the last of them, e.g. `epoch 1, minibatch 3: actor gradient norm NaN`. */
  readonly detail: string;
  /** The iteration whose update stopped (set by `PpoTrainer`), or null. */
  readonly iteration: number | null;

  constructor(streak: number, detail: string, iteration: number | null = null) {
    super(
      `${iteration === null ? '' : `iteration ${iteration}: `}${streak} consecutive minibatches had a non-finite loss or gradient norm (last: ${detail}); their optimiser steps were skipped, so the weights are still those of the last finite step. Lower the learning rates (lr, criticLr), train in float32 rather than half precision, check the rewards and the model's outputs, or raise maxNonFiniteSkips.`,
    );
    this.name = 'NonFiniteUpdateError';
    this.streak = streak;
    this.detail = detail;
    this.iteration = iteration;
  }
}

/** Thrown by `assertFiniteCheckpoint` when a checkpoint holds a NaN or ±∞ (it must not be saved). */
export class NonFiniteStateError extends Error {
  /** The tensor at fault, e.g. `actorWeights[3]` or `criticOptimizer.v[0]`. */
  readonly tensor: string;

  constructor(tensor: string, problem: string) {
    super(
      `checkpoint: ${tensor} ${problem}; refusing to save non-finite weights (the previous checkpoint stays the latest). Lower the learning rates or raise the precision, then resume from the previous checkpoint.`,
    );
    this.name = 'NonFiniteStateError';
    this.tensor = tensor;
  }
}
