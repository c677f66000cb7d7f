import type { AdvantageNormalisation } from './config.js';

/** Added to the standard deviation before dividing, as in the original code. */
export const NORMALISATION_EPS = 1e-8;

/**
 * Standardises a minibatch of advantages, Â = (A − μ) / (σ + 1e-8), with the population
 * standard deviation σ.
 *
 * - `'masked'` (default, algorithms.md §8.3's recommendation): μ and σ are computed over the real
 *   tokens only (`mask[i] = 1`), exact zeros included — a zero advantage of a real token is a
 *   genuine value. Padded entries are set to 0 in the output.
 * - `'nan-trick'` (the original trainer): entries exactly equal to 0.0 are left out of μ and σ
 *   (wherever they are), everything else — padding included — enters them, and every entry is
 *   transformed. Where the original produces NaN (no non-zero entry at all), this returns zeros.
 * - `'none'`: a copy (padding set to 0).
 *
 * @param advantages flat advantages (e.g. a padded `[B, L]` matrix, row-major)
 * @param mask 1 for real tokens, 0 for padding; `null` = every entry is real
 */
export function normaliseAdvantages(
  advantages: ArrayLike<number>,
  mask: ArrayLike<number> | null,
  mode: AdvantageNormalisation,
): Float32Array {
  const n = advantages.length;
  const out = new Float32Array(n);
  const real = (i: number) => mask === null || mask[i] !== 0;
  if (mode === 'none') {
    for (let i = 0; i < n; i++) out[i] = real(i) ? advantages[i]! : 0;
    return out;
  }
  const include =
    mode === 'masked' ? real : (i: number) => advantages[i] !== 0 && !Number.isNaN(advantages[i]!);
  let count = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    if (include(i)) {
      count++;
      sum += advantages[i]!;
    }
  }
  if (count === 0) return out;
  const mean = sum / count;
  let sq = 0;
  for (let i = 0; i < n; i++) {
    if (include(i)) sq += (advantages[i]! - mean) ** 2;
  }
  const denom = Math.sqrt(sq / count) + NORMALISATION_EPS;
  for (let i = 0; i < n; i++) {
    if (mode === 'nan-trick' || real(i)) out[i] = (advantages[i]! - mean) / denom;
  }
  return out;
}
