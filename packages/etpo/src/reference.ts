import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';

/**
 * The reference policy π̄ that the KL term pulls towards, per row of a `[rows, vocab]` batch:
 * log-probabilities (e.g. the base model with its adapters off, ETPO's default), or `'uniform'`
 * (plain entropy regularisation: KL(π ‖ uniform) = log V − H(π)).
 */
export type Reference = tf.Tensor2D | 'uniform';

/** Checks a `[rows, vocab]` tensor against the expected shape. */
export function checkMatrix(name: string, t: tf.Tensor, rows?: number, vocab?: number): void {
  if (!(t instanceof tf.Tensor) || t.rank !== 2) {
    throw new EtpoArgumentError(
      name,
      `expected a [rows, vocab] tensor, got rank ${(t as tf.Tensor)?.rank}`,
    );
  }
  if (
    (rows !== undefined && t.shape[0] !== rows) ||
    (vocab !== undefined && t.shape[1] !== vocab)
  ) {
    throw new EtpoArgumentError(
      name,
      `expected shape [${rows}, ${vocab}], got [${t.shape.join(', ')}]; every input must cover the same rows and vocabulary`,
    );
  }
}

/** Checks β, the temperature of the KL regulariser. */
export function checkBeta(beta: number): void {
  if (!(Number.isFinite(beta) && beta > 0)) {
    throw new EtpoArgumentError('beta', `expected a finite number > 0, got ${beta}`);
  }
}

/** log π̄ as a `[rows, vocab]` tensor (the uniform one broadcasts as `[1, vocab]`). */
export function referenceLogProbs(reference: Reference, rows: number, vocab: number): tf.Tensor2D {
  if (reference === 'uniform') return tf.fill([1, vocab], -Math.log(vocab)) as tf.Tensor2D;
  checkMatrix('reference', reference, rows, vocab);
  return reference;
}

/**
 * Checks a policy's logits, a Q of the same shape and β, and returns π, log π and
 * log(π/π̄) at every row (call inside `tf.tidy`).
 */
export function policyTerms(
  policyLogits: tf.Tensor2D,
  q: tf.Tensor2D,
  reference: Reference,
  beta: number,
): { pi: tf.Tensor2D; logPi: tf.Tensor2D; logRatio: tf.Tensor2D } {
  checkBeta(beta);
  checkMatrix('policyLogits', policyLogits);
  const [rows, vocab] = policyLogits.shape;
  checkMatrix('q', q, rows, vocab);
  const ref = referenceLogProbs(reference, rows, vocab);
  const logPi = tf.logSoftmax(policyLogits);
  return { pi: tf.exp(logPi), logPi, logRatio: tf.sub(logPi, ref) };
}
