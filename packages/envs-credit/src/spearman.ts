import { averageRanks, spearmanCorrelation } from '@poad/bellman';
import { CreditArgumentError } from './errors.js';

/** Ranks 1..n of `xs`, ties sharing the average of the ranks they span (`@poad/bellman`'s). */
export { averageRanks };

function check(name: string, xs: ArrayLike<number>): void {
  if (xs === null || typeof xs !== 'object' || typeof xs.length !== 'number') {
    throw new CreditArgumentError(`spearman(${name})`, 'expected an array of numbers.');
  }
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new CreditArgumentError(
        `spearman(${name})`,
        `entry ${i} is ${String(x)}; every entry must be a finite number (drop the pair, or leave out steps without an exact value).`,
      );
    }
  }
}

/**
 * Spearman's rank correlation of two paired series: the Pearson correlation of their ranks,
 * tied values sharing the average of the ranks they span. In [−1, 1]; 1 when `ys` grows with
 * `xs`, −1 when it falls.
 *
 * NaN when it is not defined: fewer than two pairs, or either series constant (all its ranks
 * equal, so the correlation is 0/0). A learner records NaN for such an iteration rather than a
 * number that means nothing. Throws a `CreditArgumentError` for series of different lengths or
 * a non-finite entry.
 */
export function spearman(xs: ArrayLike<number>, ys: ArrayLike<number>): number {
  check('xs', xs);
  check('ys', ys);
  if (xs.length !== ys.length) {
    throw new CreditArgumentError(
      'spearman(ys)',
      `has ${ys.length} entries but xs has ${xs.length}; pass one pair per step.`,
    );
  }
  // The checks above name this function's arguments; the computation is `@poad/bellman`'s.
  return spearmanCorrelation(xs, ys);
}
