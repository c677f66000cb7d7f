import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';
import type { VocabularyScores } from './policy.js';

/** Added to the logits of tokens outside a row's allowed set: exp() of it is exactly 0. */
const MASKED = -1e9;

/**
 * The label-restricted token space (`tokenSpace: 'labels'`) for ETPO: `allowed[r]` lists the
 * ids that row r may take (an empty list: no restriction). π and π̄ are renormalised over the
 * allowed ids (a uniform π̄ becomes uniform over them); Q is left as is, since it only enters
 * through π-weighted sums. A row with a single allowed id then has π = π̄ = 1 there: KL 0 and
 * soft value Q(that id). Call inside `tf.tidy`.
 */
export function restrictScores(
  scores: VocabularyScores,
  allowed: readonly (readonly number[] | Int32Array)[],
): VocabularyScores {
  const [rows, vocab] = scores.policyLogits.shape;
  const m = tf.tensor2d(allowedLogitMask(allowed, rows, vocab), [rows, vocab]);
  const reference =
    scores.reference === 'uniform'
      ? (tf.logSoftmax(m) as tf.Tensor2D)
      : (tf.logSoftmax(tf.add(scores.reference, m)) as tf.Tensor2D);
  return { policyLogits: tf.add(scores.policyLogits, m) as tf.Tensor2D, q: scores.q, reference };
}

/**
 * What `restrictScores` adds to the logits of `allowed`'s rows (`[rows, vocab]`, row-major): 0 at
 * the allowed ids, {@link MASKED} elsewhere; a row with an empty set is all 0 (no restriction).
 */
export function allowedLogitMask(
  allowed: readonly (readonly number[] | Int32Array)[],
  rows: number,
  vocab: number,
): Float32Array {
  if (allowed.length !== rows) {
    throw new EtpoArgumentError(
      'allowed',
      `expected one allowed set per score row (${rows}), got ${allowed.length}`,
    );
  }
  const mask = new Float32Array(rows * vocab);
  allowed.forEach((ids, r) => {
    if (ids.length === 0) return;
    mask.fill(MASKED, r * vocab, (r + 1) * vocab);
    for (const id of ids) {
      if (!(Number.isInteger(id) && id >= 0 && id < vocab)) {
        throw new EtpoArgumentError(
          `allowed[${r}]`,
          `token id ${id} is outside the vocabulary [0, ${vocab})`,
        );
      }
      mask[r * vocab + id] = 0;
    }
  });
  return mask;
}

/** Each token row's allowed set of a batch (`allowed[i][k]` flattened in row order). */
export function flatAllowed(allowed: readonly (readonly Int32Array[])[]): Int32Array[] {
  return allowed.flatMap((perToken) => [...perToken]);
}
