import { availableParallelism } from 'node:os';
import { DataSciOptionError } from './errors.js';

/**
 * Bounds how many sandboxed evaluations run at once. Each evaluation is an asynchronous child
 * process, so waiting on them never blocks Node's event loop; the pool only queues the surplus.
 */
export class EvaluationPool {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** @param concurrency evaluations allowed at once (a positive integer). */
  constructor(readonly concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new DataSciOptionError(
        'concurrency',
        `expected a positive integer, got ${String(concurrency)}.`,
      );
    }
  }

  /** Evaluations running now. */
  get running(): number {
    return this.active;
  }

  /** Evaluations waiting for a free slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `task` when a slot is free and resolves with its result. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

let shared: EvaluationPool | undefined;

/** The pool used by environments that are not given one: min(4, CPU count) slots. */
export function defaultEvaluationPool(): EvaluationPool {
  shared ??= new EvaluationPool(Math.max(1, Math.min(4, availableParallelism())));
  return shared;
}
