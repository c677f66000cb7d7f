import * as tf from '@tensorflow/tfjs-core';
import { activeFusedOps } from './fused.js';

/** Per-row log-probability of a target token and entropy of the softmax over the vocabulary. */
export interface LogProbStats {
  logProbs: tf.Tensor1D;
  entropies: tf.Tensor1D;
}

/*
 * For logits z (one row), p = softmax(z), log p = z − lse:
 *   lp = z_t − lse                     ∂lp/∂z_j = δ_jt − p_j
 *   H  = −Σ p_j log p_j                ∂H/∂z_j  = −p_j (log p_j + H)
 * Both come from one exponential per logit; the backward pass needs no exponential at all.
 */

function fusedStats(logits: tf.Tensor2D, targets: Int32Array): LogProbStats {
  const v = logits.shape[1];
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [z, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    const shifted = tf.sub(z, tf.max(z, 1, true));
    const e = tf.exp(shifted);
    const s = tf.sum(e, 1, true);
    const p = tf.div(e, s);
    const logp = tf.sub(shifted, tf.log(s));
    const h = tf.neg(tf.sum(tf.mul(p, logp), 1));
    const onehot = tf.oneHot(tf.tensor1d(targets, 'int32'), v);
    const lp = tf.sum(tf.mul(logp, onehot), 1);
    save([p, logp, h, onehot]);
    return {
      value: tf.concat([lp, h]),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [ps, lps, hs, oh] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D, tf.Tensor2D];
        const n = ps.shape[0];
        const [gl, gh] = tf.split(tf.reshape(dy, [2 * n, 1]), 2) as [tf.Tensor2D, tf.Tensor2D];
        const dLp = tf.mul(gl, tf.sub(oh, ps));
        const dH = tf.mul(tf.neg(gh), tf.mul(ps, tf.add(lps, tf.reshape(hs, [n, 1]))));
        return tf.add(dLp, dH);
      },
    };
  });
  const both = f(logits) as tf.Tensor1D;
  const [logProbs, entropies] = tf.split(both, 2) as [tf.Tensor1D, tf.Tensor1D];
  return { logProbs, entropies };
}

/**
 * Log-probabilities of `targets` under softmax(logits) and the softmax entropies, one per row,
 * differentiable w.r.t. the logits with one exponential per logit (the stock composition needs
 * three: log-softmax forward, its gradient, and the entropy). One native pass each way when
 * fused ops are installed.
 */
export function logProbStats(logits: tf.Tensor2D, targets: Int32Array): LogProbStats {
  if (targets.length !== logits.shape[0]) {
    throw new Error(`logProbStats: ${targets.length} targets for ${logits.shape[0]} rows`);
  }
  const fused = activeFusedOps();
  return fused ? fused.logProbStats(logits, targets) : fusedStats(logits, targets);
}

/** Log-probabilities of `targets` under softmax(logits), one per row (no entropy, no gradient). */
export function targetLogProbs(logits: tf.Tensor2D, targets: Int32Array): tf.Tensor1D {
  const fused = activeFusedOps();
  if (fused) return tf.tidy(() => fused.logProbStats(logits, targets).logProbs);
  return tf.tidy(() => {
    const m = tf.max(logits, 1, true);
    const lse = tf.add(m, tf.log(tf.sum(tf.exp(tf.sub(logits, m)), 1, true)));
    const onehot = tf.oneHot(tf.tensor1d(targets, 'int32'), logits.shape[1]);
    return tf.reshape(tf.sub(tf.sum(tf.mul(logits, onehot), 1, true), lse), [-1]) as tf.Tensor1D;
  });
}
