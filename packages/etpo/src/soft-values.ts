import * as tf from '@tensorflow/tfjs-core';
import { policyTerms, type Reference } from './reference.js';
import { restrictScores } from './restrict.js';

/** Per-row soft statistics of a policy against a Q over the vocabulary (each `[rows]`). */
export interface SoftStats {
  /** E_{w∼π}[Q(w)]. */
  expectedQ: tf.Tensor1D;
  /** KL(π ‖ π̄) = Σ_w π(w)·(log π(w) − log π̄(w)). */
  kl: tf.Tensor1D;
  /** The soft value E_π[Q] − β·KL(π ‖ π̄), what soft BAD backs up. */
  softValue: tf.Tensor1D;
}

/**
 * Soft statistics at each row (one row per token position): π = softmax(`policyLogits`), Q over
 * the vocabulary (ETPO: the language-model head of the (target) critic adapter), π̄ from
 * `reference`. The vocabulary-sized tensors are reduced here, so a rollout stores three numbers
 * per token, not a vocabulary's worth. No gradient is meant to flow through these: they feed
 * critic targets (`softBad` of `@poad/bellman`). `allowed` (`tokenSpace: 'labels'`): each row's
 * allowed token ids, over which π and π̄ are renormalised first (`restrictScores`).
 */
export function softStats(
  policyLogits: tf.Tensor2D,
  q: tf.Tensor2D,
  reference: Reference,
  beta: number,
  allowed?: readonly (readonly number[] | Int32Array)[],
): SoftStats {
  return tf.tidy(() => {
    const s = allowed
      ? restrictScores({ policyLogits, q, reference }, allowed)
      : { policyLogits, q, reference };
    const { pi, logRatio } = policyTerms(s.policyLogits, q, s.reference, beta);
    const expectedQ = tf.sum(tf.mul(pi, q), 1) as tf.Tensor1D;
    const kl = tf.sum(tf.mul(pi, logRatio), 1) as tf.Tensor1D;
    const softValue = tf.sub(expectedQ, tf.mul(beta, kl)) as tf.Tensor1D;
    return { expectedQ, kl, softValue };
  });
}
