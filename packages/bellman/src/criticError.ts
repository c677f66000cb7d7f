// How far a critic's values are from the exact ones: RMSE, mean signed error and Spearman's ρ.

/** Ranks 1..n of `xs`, tied values sharing the average of the ranks they span. */
export function averageRanks(xs: ArrayLike<number>): Float64Array {
  const n = xs.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => xs[a]! - xs[b]!);
  const ranks = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i + 1;
    while (j < n && xs[order[j]!] === xs[order[i]!]) j++;
    // positions i..j−1 hold equal values: ranks i+1..j, average (i + 1 + j)/2
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]!] = rank;
    i = j;
  }
  return ranks;
}

function checkSeries(fn: string, field: string, xs: unknown): ArrayLike<number> {
  if (
    xs === null ||
    typeof xs !== 'object' ||
    typeof (xs as { length?: unknown }).length !== 'number'
  ) {
    throw new TypeError(`${fn}: \`${field}\` must be an array or typed array of numbers`);
  }
  return xs as ArrayLike<number>;
}

function checkFiniteEntries(fn: string, field: string, xs: ArrayLike<number>): void {
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new RangeError(
        `${fn}: \`${field}[${i}]\` is ${String(x)}; every entry must be a finite number (leave the pair out)`,
      );
    }
  }
}

/** Pearson correlation of two rank vectors of length n ≥ 2 (NaN when either is constant). */
function rankPearson(rx: Float64Array, ry: Float64Array): number {
  const n = rx.length;
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

/**
 * Spearman's rank correlation of two paired series: the Pearson correlation of their ranks, tied
 * values sharing the average of the ranks they span. In [−1, 1]; NaN when it is not defined
 * (fewer than two pairs, or either series constant).
 *
 * @throws TypeError / RangeError for a series that is not an array, series of different
 * lengths, or a non-finite entry
 */
export function spearmanCorrelation(xs: ArrayLike<number>, ys: ArrayLike<number>): number {
  const FN = 'spearmanCorrelation';
  checkFiniteEntries(FN, 'xs', checkSeries(FN, 'xs', xs));
  checkFiniteEntries(FN, 'ys', checkSeries(FN, 'ys', ys));
  if (xs.length !== ys.length) {
    throw new RangeError(
      `${FN}: \`ys\` has ${ys.length} entries but \`xs\` has ${xs.length}; pass one pair per item`,
    );
  }
  if (xs.length < 2) return Number.NaN;
  return rankPearson(averageRanks(xs), averageRanks(ys));
}

/** Options of {@link criticError}. */
export interface CriticErrorOptions {
  /**
   * Exact values are rounded to multiples of this before ranking, so that values equal in exact
   * arithmetic but computed along different paths (apart by ~1e-16) tie instead of ranking
   * apart. Default 1e-12; 0 ranks the exact values as given. RMSE and bias use them unrounded.
   */
  tieGrid?: number;
}

/** What {@link criticError} measured. */
export interface CriticError {
  /** Pairs measured: those whose exact value is defined. */
  readonly count: number;
  /** Pairs left out because their exact value is NaN (a prefix of probability 0). */
  readonly skipped: number;
  /** √(mean (V − V_exact)²); NaN when no pair was measured. */
  readonly rmse: number;
  /** mean(V − V_exact): > 0 when the critic over-values; NaN when no pair was measured. */
  readonly bias: number;
  /** Spearman's ρ(V, V_exact), ties by average ranks; NaN with < 2 pairs or a constant side. */
  readonly spearman: number;
}

/**
 * The error of a critic against exact values, pooled over every position given (for a
 * token-level critic: every token prefix of every action of a rollout, each position's
 * V(s, w_<k) paired with the exact V^π(s, w_<k)):
 *
 * - `rmse` = √(mean (V − V^π)²), how far the values are;
 * - `bias` = mean(V − V^π), the signed error (positive: the critic over-values);
 * - `spearman` = Spearman's ρ(V, V^π), whether the critic at least orders positions as the
 *   exact values do (ties by average ranks).
 *
 * Pairs whose exact value is NaN (a prefix no label of positive probability continues) are left
 * out and counted in `skipped`.
 *
 * @param critic the critic's values, one per position
 * @param exact the exact values at the same positions (NaN where undefined)
 * @throws TypeError / RangeError for arrays of different lengths, a non-finite critic value, an
 * infinite exact value or a negative `tieGrid`
 */
export function criticError(
  critic: ArrayLike<number>,
  exact: ArrayLike<number>,
  options: CriticErrorOptions = {},
): CriticError {
  const FN = 'criticError';
  checkSeries(FN, 'critic', critic);
  checkSeries(FN, 'exact', exact);
  if (critic.length !== exact.length) {
    throw new RangeError(
      `${FN}: \`exact\` has ${exact.length} entries but \`critic\` has ${critic.length}; pass one exact value per critic value, at the same position`,
    );
  }
  const grid = options?.tieGrid ?? 1e-12;
  if (typeof grid !== 'number' || !(grid >= 0) || !Number.isFinite(grid)) {
    throw new RangeError(
      `${FN}: \`options.tieGrid\` must be a finite number ≥ 0 (0 = no rounding), got ${String(grid)}`,
    );
  }
  checkFiniteEntries(FN, 'critic', critic);
  const n = critic.length;
  const kept: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = exact[i];
    if (typeof x !== 'number') {
      throw new TypeError(`${FN}: \`exact[${i}]\` must be a number, got ${typeof x}`);
    }
    if (Number.isNaN(x)) continue;
    if (!Number.isFinite(x)) {
      throw new RangeError(
        `${FN}: \`exact[${i}]\` is ${x}; exact values are finite (NaN marks an undefined one)`,
      );
    }
    kept.push(i);
  }
  const m = kept.length;
  let sq = 0;
  let diff = 0;
  const v = new Float64Array(m);
  const e = new Float64Array(m);
  kept.forEach((i, j) => {
    const d = critic[i]! - exact[i]!;
    sq += d * d;
    diff += d;
    v[j] = critic[i]!;
    e[j] = grid > 0 ? Math.round(exact[i]! / grid) * grid : exact[i]!;
  });
  return {
    count: m,
    skipped: n - m,
    rmse: m > 0 ? Math.sqrt(sq / m) : Number.NaN,
    bias: m > 0 ? diff / m : Number.NaN,
    spearman: m < 2 ? Number.NaN : rankPearson(averageRanks(v), averageRanks(e)),
  };
}
