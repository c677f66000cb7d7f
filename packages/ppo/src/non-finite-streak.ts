import { NonFiniteUpdateError } from './errors.js';

/**
 * The run of consecutive minibatches whose loss or gradient norm was not finite (their optimiser
 * steps skipped), carried from one update to the next. Every trainer family's update keeps one:
 * a finite minibatch ends the run, a skipped one extends it, and at `limit` (`maxNonFiniteSkips`)
 * the update stops with `NonFiniteUpdateError`.
 */
export class NonFiniteStreak {
  /** Minibatches skipped in this update (the streak may have begun in an earlier one). */
  skips = 0;

  /**
   * @param length the streak the previous update ended with (0 for a fresh run).
   * @param limit consecutive skips that stop the update.
   */
  constructor(
    public length: number,
    private readonly limit: number,
  ) {}

  /** A minibatch that stepped: the streak ends. */
  finite(): void {
    this.length = 0;
  }

  /**
   * A minibatch skipped for values that were not finite.
   * @param detail names the minibatch and what was not finite, for the error (only built then).
   * @throws NonFiniteUpdateError when the streak reaches the limit.
   */
  skipped(detail: () => string): void {
    this.skips += 1;
    this.length += 1;
    if (this.length >= this.limit) throw new NonFiniteUpdateError(this.length, detail());
  }
}
