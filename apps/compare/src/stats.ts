// Statistics of a comparison between groups of seeds: a percentile-bootstrap confidence interval
// of a difference in means and a two-sided permutation test (both seeded; the test exact over
// every split when they are few), Holm's adjustment of a family of p-values, Fisher's exact test
// on counts of solved seeds, and that test's power and smallest detectable difference.
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
  /** Enumerate every split when there are at most this many (default 1,000,000). */
  exactLimit?: number;
}

/** The default most splits {@link compareGroups} enumerates before it samples them instead. */
export const EXACT_LIMIT = 1_000_000;

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
  const exact = splits <= (options.exactLimit ?? EXACT_LIMIT);
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

/**
 * Holm's step-down adjustment of a family of p-values (controls the family-wise error rate):
 * sorted ascending, the i-th smallest (from 0) becomes max over j ≤ i of min(1, (m − j)·p_(j)).
 * Returned in the input's order; an empty family gives an empty array.
 *
 * @throws RangeError when a p-value is not in [0, 1].
 */
export function holm(pValues: readonly number[]): number[] {
  const m = pValues.length;
  for (const p of pValues)
    if (!(p >= 0 && p <= 1)) throw new RangeError(`holm: p-value ${p} is not in [0, 1]`);
  const order = pValues.map((_, i) => i).sort((i, j) => pValues[i]! - pValues[j]! || i - j);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach((index, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * pValues[index]!));
    adjusted[index] = running;
  });
  return adjusted;
}

/** log(n!) for n = 0…max, by summing logs (exact enough for the sizes of a comparison). */
function logFactorials(max: number): Float64Array {
  const table = new Float64Array(max + 1);
  for (let n = 2; n <= max; n++) table[n] = table[n - 1]! + Math.log(n);
  return table;
}

/** Successes out of a group's size, e.g. the seeds an algorithm solved. */
export interface Count {
  successes: number;
  of: number;
}

function checkCount(name: string, c: Count): void {
  if (!Number.isInteger(c.of) || c.of < 1)
    throw new RangeError(`fisherExact: group ${name} needs a whole size ≥ 1, got ${c.of}`);
  if (!Number.isInteger(c.successes) || c.successes < 0 || c.successes > c.of)
    throw new RangeError(
      `fisherExact: group ${name} has ${c.successes} successes out of ${c.of} (need a whole number from 0 to ${c.of})`,
    );
}

/**
 * Fisher's exact test of a 2 × 2 table (successes and failures of two groups), two-sided: given
 * the margins, the successes of group a are hypergeometric; the p-value sums the probabilities of
 * every table no more likely than the observed one (with a relative tolerance of 1e-7, so ties
 * of equal probability count despite rounding).
 *
 * @throws RangeError for sizes below 1 or counts outside [0, size].
 */
export function fisherExact(a: Count, b: Count): number {
  checkCount('a', a);
  checkCount('b', b);
  const n = a.of + b.of;
  const total = a.successes + b.successes;
  const lf = logFactorials(n);
  const choose = (x: number, k: number) => lf[x]! - lf[k]! - lf[x - k]!;
  const logDenominator = choose(n, total);
  const prob = (k: number) => Math.exp(choose(a.of, k) + choose(b.of, total - k) - logDenominator);
  const observed = prob(a.successes);
  let p = 0;
  for (let k = Math.max(0, total - b.of); k <= Math.min(a.of, total); k++) {
    const q = prob(k);
    if (q <= observed * (1 + 1e-7)) p += q;
  }
  return Math.min(1, p);
}

/** The binomial probabilities P(X = k), k = 0…n, for X ~ Binomial(n, rate). */
function binomialPmf(n: number, rate: number): Float64Array {
  const out = new Float64Array(n + 1);
  if (rate <= 0 || rate >= 1) {
    out[rate <= 0 ? 0 : n] = 1;
    return out;
  }
  const lf = logFactorials(n);
  for (let k = 0; k <= n; k++)
    out[k] = Math.exp(
      lf[n]! - lf[k]! - lf[n - k]! + k * Math.log(rate) + (n - k) * Math.log1p(-rate),
    );
  return out;
}

/** Which outcomes (successes of a, successes of b) Fisher's test rejects at `alpha`. */
function rejections(sizeA: number, sizeB: number, alpha: number): Uint8Array {
  const reject = new Uint8Array((sizeA + 1) * (sizeB + 1));
  for (let x = 0; x <= sizeA; x++)
    for (let y = 0; y <= sizeB; y++)
      reject[x * (sizeB + 1) + y] =
        fisherExact({ successes: x, of: sizeA }, { successes: y, of: sizeB }) <= alpha ? 1 : 0;
  return reject;
}

/**
 * The power of the two-sided Fisher's exact test at level `alpha` when the two groups' true
 * success rates are `rateA` and `rateB`: the probability, summed exactly over every outcome of the
 * two binomial draws, that the test rejects.
 */
export function fisherPower(
  sizeA: number,
  sizeB: number,
  rateA: number,
  rateB: number,
  alpha = 0.05,
): number {
  return powerFrom(rejections(sizeA, sizeB, alpha), sizeA, sizeB, rateA, rateB);
}

function powerFrom(reject: Uint8Array, sizeA: number, sizeB: number, rateA: number, rateB: number) {
  const pa = binomialPmf(sizeA, rateA);
  const pb = binomialPmf(sizeB, rateB);
  let power = 0;
  for (let x = 0; x <= sizeA; x++)
    for (let y = 0; y <= sizeB; y++) if (reject[x * (sizeB + 1) + y]) power += pa[x]! * pb[y]!;
  return power;
}

/** Options of {@link detectableDifference}. */
export interface DetectableOptions {
  /** Level of the test (default 0.05). */
  alpha?: number;
  /** Power asked for (default 0.8). */
  power?: number;
  /** The rates are centre ∓ Δ/2 (default 0.5, where a difference is hardest to detect). */
  centre?: number;
}

/**
 * The smallest difference in success rate Δ (to 0.01) that Fisher's two-sided exact test detects
 * with the asked-for power when group a's true rate is centre − Δ/2 and group b's centre + Δ/2;
 * null when no Δ that keeps both rates in [0, 1] reaches it.
 */
export function detectableDifference(
  sizeA: number,
  sizeB: number,
  options: DetectableOptions = {},
): number | null {
  const alpha = options.alpha ?? 0.05;
  const target = options.power ?? 0.8;
  const centre = options.centre ?? 0.5;
  const reject = rejections(sizeA, sizeB, alpha);
  for (let step = 1; step <= 100; step++) {
    const delta = step / 100;
    const [ra, rb] = [centre - delta / 2, centre + delta / 2];
    if (ra < -1e-12 || rb > 1 + 1e-12) return null;
    if (powerFrom(reject, sizeA, sizeB, Math.max(0, ra), Math.min(1, rb)) >= target) return delta;
  }
  return null;
}
