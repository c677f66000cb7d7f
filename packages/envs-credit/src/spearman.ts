import { CreditArgumentError } from './errors.js';

/** Ranks 1..n of `xs`, ties sharing the average of the ranks they span. */
export function averageRanks(xs: ArrayLike<number>): Float64Array {
  const n = xs.length;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (xs[a] as number) - (xs[b] as number),
  );
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i + 1;
    while (j < n && xs[order[j]!] === xs[order[i]!]) j++;
    // positions i..j-1 hold equal values: ranks i+1..j, average (i + 1 + j) / 2
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]!] = rank;
    i = j;
  }
  return ranks;
}

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
  const n = xs.length;
  if (n < 2) return Number.NaN;
  const rx = averageRanks(xs);
  const ry = averageRanks(ys);
  const mean = (n + 1) / 2; // the mean of any average-rank vector
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = rx[i]! - mean;
    const dy = ry[i]! - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return Number.NaN;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}
