import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';
import { checkMatrix, policyTerms, type Reference } from './reference.js';
import { stopGradient } from './stop-gradient.js';

/** Mean over rows, weighted by `mask` (1 = a real token, 0 = padding) when given. */
function rowMean(values: tf.Tensor1D, mask: tf.Tensor1D | undefined): tf.Scalar {
  if (!mask) return tf.mean(values) as tf.Scalar;
  if (mask.rank !== 1 || mask.shape[0] !== values.shape[0]) {
    throw new EtpoArgumentError(
      'mask',
      `expected shape [${values.shape[0]}], got [${mask.shape.join(', ')}]`,
    );
  }
  return tf.div(tf.sum(tf.mul(values, mask)), tf.maximum(tf.sum(mask), 1)) as tf.Scalar;
}

/**
 * ETPO's policy loss at each row, averaged: Σ_w π(w)·(β·log(π(w)/π̄(w)) − Q(w)), which equals
 * β·KL(π ‖ π̄·e^{Q/β}/Z) − β·log Z. Q is a constant here (no gradient reaches the critic); the
 * gradient flows through π only, so the minimiser is π ∝ π̄·exp(Q/β). (The reference code's
 * mean_w(β·log π(w) − Q(w)) has a gradient that ignores Q.)
 */
export function etpoPolicyLoss(
  policyLogits: tf.Tensor2D,
  q: tf.Tensor2D,
  reference: Reference,
  beta: number,
  mask?: tf.Tensor1D,
): tf.Scalar {
  return tf.tidy(() => {
    const { pi, logRatio } = policyTerms(policyLogits, q, reference, beta);
    const perRow = tf.sum(tf.mul(pi, tf.sub(tf.mul(beta, logRatio), stopGradient(q))), 1);
    return rowMean(perRow as tf.Tensor1D, mask);
  });
}

/**
 * The soft-BAD critic regression ½·(Q(chosen token) − y)², averaged over rows: `q` is the online
 * critic's Q over the vocabulary at each token position, `chosen` the token taken there (exactly
 * as sampled), `targets` y from `softBad` of `@poad/bellman` on the target critic's soft values.
 */
export function etpoCriticLoss(
  q: tf.Tensor2D,
  chosen: tf.Tensor1D,
  targets: tf.Tensor1D,
  mask?: tf.Tensor1D,
): tf.Scalar {
  checkMatrix('q', q);
  const rows = q.shape[0];
  if (chosen.rank !== 1 || chosen.shape[0] !== rows || chosen.dtype !== 'int32') {
    throw new EtpoArgumentError(
      'chosen',
      `expected an int32 tensor of shape [${rows}], got ${chosen.dtype} [${chosen.shape.join(', ')}]`,
    );
  }
  if (targets.rank !== 1 || targets.shape[0] !== rows) {
    throw new EtpoArgumentError(
      'targets',
      `expected shape [${rows}], got [${targets.shape.join(', ')}]`,
    );
  }
  return tf.tidy(() => {
    const picked = tf.sum(tf.mul(q, tf.oneHot(chosen, q.shape[1])), 1);
    const err = tf.sub(picked, stopGradient(targets));
    return rowMean(tf.mul(0.5, tf.square(err)) as tf.Tensor1D, mask);
  });
}
