import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';
import { checkMatrix, policyTerms, type Reference } from './reference.js';
import { allowedLogitMask } from './restrict.js';
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
 * gradient flows through π only, so the minimiser is π ∝ π̄·exp(Q/β). (The released code's
 * mean_w(β·log π(w) − Q(w)), {@link etpoReleasedPolicyLoss}, has a gradient that ignores Q.)
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
 * The policy loss of the ETPO authors' released code, at each row the plain mean over the token
 * space of β·log π(w) − Q(w) (not weighted by π), then averaged over rows as
 * {@link etpoPolicyLoss} does (by `mask` when given). Q is held constant and π̄ (`reference`) does
 * not enter: the reference is only checked, so that both forms take the same arguments.
 *
 * Its gradient w.r.t. the logits z of a row with V tokens is β·(1/V − π(w)) per logit (divided by
 * the number of rows, or weighted by the mask), and Q, a constant with no gradient path, shifts
 * the value without moving π at all. The uniform π is a stationary point but the loss's maximum
 * (Σ_w log π(w) is largest there): a descent step raises the logits of tokens with π > 1/V and
 * lowers the others, so minimising it sharpens π on what it already prefers (an entropy penalty,
 * unbounded below as probabilities go to 0), whatever Q is.
 *
 * `allowed` (`tokenSpace: 'labels'`, the sets given to `restrictScores`): the logits are
 * restricted to each row's allowed ids (idempotent if they already are) and the mean runs over
 * those ids only, the same w's that carry π's mass in {@link etpoPolicyLoss}; a row with an empty
 * set averages over the whole vocabulary. The gradient is then β·(1/|A| − π(w)) on the allowed ids
 * and 0 elsewhere.
 */
export function etpoReleasedPolicyLoss(
  policyLogits: tf.Tensor2D,
  q: tf.Tensor2D,
  reference: Reference,
  beta: number,
  mask?: tf.Tensor1D,
  allowed?: readonly (readonly number[] | Int32Array)[],
): tf.Scalar {
  return tf.tidy(() => {
    const [rows, vocab] = policyLogits.shape;
    const restriction = allowed ? allowedLogitMask(allowed, rows, vocab) : null;
    const logits = restriction
      ? (tf.add(policyLogits, tf.tensor2d(restriction, [rows, vocab])) as tf.Tensor2D)
      : policyLogits;
    const { logPi } = policyTerms(logits, q, reference, beta);
    const terms = tf.sub(tf.mul(beta, logPi), stopGradient(q));
    const perRow = restriction
      ? tf.sum(tf.mul(terms, tf.tensor2d(spaceWeights(restriction, rows, vocab), [rows, vocab])), 1)
      : tf.mean(terms, 1);
    return rowMean(perRow as tf.Tensor1D, mask);
  });
}

/** 1/|A_r| at the ids a row may take (where its logit mask is 0), 0 elsewhere. */
function spaceWeights(restriction: Float32Array, rows: number, vocab: number): Float32Array {
  const weights = new Float32Array(rows * vocab);
  for (let r = 0; r < rows; r++) {
    let size = 0;
    for (let w = r * vocab; w < (r + 1) * vocab; w++) if (restriction[w] === 0) size++;
    for (let w = r * vocab; w < (r + 1) * vocab; w++)
      if (restriction[w] === 0) weights[w] = 1 / size;
  }
  return weights;
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
