import type { CandidateNormalisation } from './config.js';
import { PpoConfigError } from './errors.js';

/**
 * The divisor of a candidate's summed token log-prob: its whitespace-separated word count
 * ('words', TWOSOME's default), its token count ('tokens'), or 1 ('none').
 */
export function candidateNormaliser(
  label: string,
  tokenCount: number,
  mode: CandidateNormalisation,
): number {
  if (mode === 'none') return 1;
  if (mode === 'tokens') return Math.max(1, tokenCount);
  const words = label
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0).length;
  return Math.max(1, words);
}

/** The TWOSOME distribution over the valid labels of one observation. */
export interface CandidateDistribution {
  /** Normalised scores: Σ token log-probs ÷ normaliser. */
  readonly logits: Float64Array;
  /** Softmax of `logits`. */
  readonly probs: Float64Array;
  /** Log of `probs` (log π̃). */
  readonly logProbs: Float64Array;
  /** Entropy of `probs` in nats. */
  readonly entropy: number;
}

/**
 * TWOSOME's normalised candidate distribution (paper eq. 6):
 * π̃(a|o) = softmax_a( log π(a|o) / n(a) ), with log π(a|o) = Σ_k log π(w_k | o, w_<k).
 *
 * @param tokenLogProbSums Σ of each candidate's per-token log-probs.
 * @param normalisers n(a) for each candidate (see {@link candidateNormaliser}).
 */
export function candidateDistribution(
  tokenLogProbSums: ArrayLike<number>,
  normalisers: ArrayLike<number>,
): CandidateDistribution {
  const n = tokenLogProbSums.length;
  if (n === 0 || normalisers.length !== n) {
    throw new PpoConfigError(
      'candidateDistribution(tokenLogProbSums, normalisers)',
      `expected equal, non-zero lengths, got ${n} and ${normalisers.length}.`,
    );
  }
  const logits = new Float64Array(n);
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    logits[i] = tokenLogProbSums[i]! / normalisers[i]!;
    if (logits[i]! > max) max = logits[i]!;
  }
  let z = 0;
  for (let i = 0; i < n; i++) z += Math.exp(logits[i]! - max);
  const logZ = max + Math.log(z);
  const probs = new Float64Array(n);
  const logProbs = new Float64Array(n);
  let entropy = 0;
  for (let i = 0; i < n; i++) {
    logProbs[i] = logits[i]! - logZ;
    probs[i] = Math.exp(logProbs[i]!);
    if (probs[i]! > 0) entropy -= probs[i]! * logProbs[i]!;
  }
  return { logits, probs, logProbs, entropy };
}

/** Index of the largest probability (first on ties). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
