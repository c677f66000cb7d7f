// Statistics of a difference between two groups of seeds: a percentile-bootstrap confidence
// interval of the difference in means and a two-sided permutation test. Both are seeded.
import { createRng } from '@poad/envs-core';

/** The difference mean(a) − mean(b) with its interval and test. */
export interface Difference {
  /** mean(a) − mean(b). */
  diff: number;
  /** Percentile-bootstrap interval of the difference at `level` (each group resampled alone). */
  low: number;
  high: number;
  /** Two-sided permutation p-value of |mean(a) − mean(b)| (exact when the splits are few). */
  p: number;
  /** Whether the p-value was computed over every split (else over `resamples` random ones). */
  exact: boolean;
}

/** Options of {@link compareGroups}. */
export interface CompareOptions {
  /** Seed of the resampling. */
  seed: number;
  /** Bootstrap resamples and, when the splits are too many to enumerate, permutations (default 10,000). */
  resamples?: number;
  /** Confidence level of the interval (default 0.95). */
  level?: number;
  /** Enumerate every split when there are at most this many (default 100,000). */
  exactLimit?: number;
}

const mean = (xs: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s / xs.length;
};

/** The q-quantile of sorted values, linear between order statistics. */
function quantile(sorted: Float64Array, q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/**
 * Bootstrap interval and permutation test of mean(a) − mean(b) (e.g. the final greedy returns
 * of two algorithms' seeds).
 *
 * @throws RangeError when a group is empty or holds a non-finite value.
 */
export function compareGroups(
  a: readonly number[],
  b: readonly number[],
  options: CompareOptions,
): Difference {
  for (const [name, xs] of [
    ['a', a],
    ['b', b],
  ] as const) {
    if (xs.length === 0) throw new RangeError(`compareGroups: group ${name} is empty`);
    if (!xs.every(Number.isFinite))
      throw new RangeError(`compareGroups: group ${name} holds a non-finite value`);
  }
  const resamples = options.resamples ?? 10_000;
  const level = options.level ?? 0.95;
  const rng = createRng(options.seed);
  const rand = () => rng.float();
  const diff = mean(a) - mean(b);

  // Percentile bootstrap: resample each group with replacement, keep the difference of means.
  const boot = new Float64Array(resamples);
  const draw = (xs: readonly number[]) => {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(rand() * xs.length)]!;
    return s / xs.length;
  };
  for (let r = 0; r < resamples; r++) boot[r] = draw(a) - draw(b);
  boot.sort();
  const low = quantile(boot, (1 - level) / 2);
  const high = quantile(boot, 1 - (1 - level) / 2);

  // Permutation test: the share of splits of the pooled values into groups of the same sizes
  // whose |difference of means| is at least the observed one.
  const pooled = [...a, ...b];
  const n = pooled.length;
  const k = a.length;
  const total = pooled.reduce((s, x) => s + x, 0);
  const observed = Math.abs(diff) - 1e-12 * Math.max(1, Math.abs(diff));
  const extreme = (sumA: number) => Math.abs(sumA / k - (total - sumA) / (n - k)) >= observed;
  const splits = binomial(n, k);
  let hits = 0;
  let tried = 0;
  const exact = splits <= (options.exactLimit ?? 100_000);
  if (exact) {
    // Every k-subset of the n pooled values as group a.
    const pick = (start: number, left: number, sum: number): void => {
      if (left === 0) {
        tried++;
        if (extreme(sum)) hits++;
        return;
      }
      for (let i = start; i <= n - left; i++) pick(i + 1, left - 1, sum + pooled[i]!);
    };
    pick(0, k, 0);
  } else {
    const idx = pooled.map((_, i) => i);
    for (let r = 0; r < resamples; r++) {
      // Partial Fisher–Yates: the first k positions are a uniform k-subset.
      let sum = 0;
      for (let i = 0; i < k; i++) {
        const j = i + Math.floor(rand() * (n - i));
        [idx[i], idx[j]] = [idx[j]!, idx[i]!];
        sum += pooled[idx[i]!]!;
      }
      tried++;
      if (extreme(sum)) hits++;
    }
  }
  // Monte Carlo p-values count the observed split itself, so they are never 0.
  const p = exact ? hits / tried : (hits + 1) / (tried + 1);
  return { diff, low, high, p, exact };
}
