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
 * - `'chunk:N'` (the original TWOSOME trainer): the minibatch's samples, in minibatch order, are
 *   cut into chunks of N consecutive samples and each chunk is standardised on its own with the
 *   *unbiased* standard deviation (PyTorch's `std()`), over all of its entries (a sample's
 *   tokens at token level). A chunk of one entry, whose unbiased σ is undefined (NaN in the
 *   original), gets 0. Needs `sampleLengths` (entries per sample, consecutive) and no mask.
 *
 * @param advantages flat advantages (e.g. a padded `[B, L]` matrix, row-major)
 * @param mask 1 for real tokens, 0 for padding; `null` = every entry is real
 * @param sampleLengths `'chunk:N'` only: how many consecutive entries each sample has
 */
export function normaliseAdvantages(
  advantages: ArrayLike<number>,
  mask: ArrayLike<number> | null,
  mode: AdvantageNormalisation,
  sampleLengths?: ArrayLike<number>,
): Float32Array {
  const n = advantages.length;
  const chunk = /^chunk:([1-9]\d*)$/.exec(mode);
  if (chunk) return normaliseChunks(advantages, Number(chunk[1]), sampleLengths, mode);
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

function normaliseChunks(
  advantages: ArrayLike<number>,
  size: number,
  sampleLengths: ArrayLike<number> | undefined,
  mode: string,
): Float32Array {
  if (!sampleLengths) {
    throw new RangeError(
      `normaliseAdvantages: mode '${mode}' needs sampleLengths (entries per sample)`,
    );
  }
  let total = 0;
  for (let i = 0; i < sampleLengths.length; i++) total += sampleLengths[i]!;
  if (total !== advantages.length) {
    throw new RangeError(
      `normaliseAdvantages: sampleLengths sum to ${total}, but there are ${advantages.length} advantages`,
    );
  }
  const out = new Float32Array(advantages.length);
  let start = 0;
  for (let s = 0; s < sampleLengths.length; s += size) {
    let end = start;
    for (let j = s; j < Math.min(sampleLengths.length, s + size); j++) end += sampleLengths[j]!;
    const count = end - start;
    if (count > 1) {
      let sum = 0;
      for (let i = start; i < end; i++) sum += advantages[i]!;
      const mean = sum / count;
      let sq = 0;
      for (let i = start; i < end; i++) sq += (advantages[i]! - mean) ** 2;
      const denom = Math.sqrt(sq / (count - 1)) + NORMALISATION_EPS;
      for (let i = start; i < end; i++) out[i] = (advantages[i]! - mean) / denom;
    }
    start = end;
  }
  return out;
}
