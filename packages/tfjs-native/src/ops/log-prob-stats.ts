import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../kernels/fused-ops.js';
import { fusedKernelActive } from '../register.js';
import { fusedOp } from './fused-op.js';

/** Per-row log-probability of the target and entropy of softmax(logits). */
export interface LogProbStats {
  logProbs: tf.Tensor1D;
  entropies: tf.Tensor1D;
}

/*
 * One row z, p = softmax(z), lse = log Σ exp z, target t:
 *   lp = z_t − lse              ∂lp/∂z_k = [k = t] − p_k
 *   H  = −Σ p log p             ∂H/∂z_k  = −p_k (z_k − lse + H)
 * A target outside [0, V) counts as no target (lp = 0), as with a one-hot of it.
 *
 * The native kernels compute both passes. Without them the values come from TF.js ops and TF.js
 * differentiates them (through `tf.logSoftmax` and the registered gradients of the rest), so the
 * gradient is written out only once, in TF.js ops, by `logProbStats` of `@poad/tfjs-kernels`
 * (one exponential per logit), which uses this op as its fused op on wasm.
 */

function composite(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const logp = tf.logSoftmax(logits);
  const lp = tf.sum(tf.mul(logp, tf.oneHot(targets, logits.shape[1])), 1);
  const h = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1));
  return tf.concat([lp, h]) as tf.Tensor1D;
}

function native(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const f = fusedOp(
    (z) => {
      const [stats, lse] = tf
        .engine()
        .runKernel(FUSED_KERNELS.logProbStats, { logits: z!, targets }, {}) as tf.Tensor[];
      return { value: stats!, saved: [z!, targets, lse!, stats!] };
    },
    (dy, [zs, ts, ls, ss]) =>
      tf.engine().runKernel(FUSED_KERNELS.logProbStatsGrad, {
        logits: zs!,
        targets: ts!,
        lse: ls!,
        stats: ss!,
        dy,
      }) as tf.Tensor,
  );
  return f(logits) as tf.Tensor1D;
}

/**
 * Log-probabilities of `targets` under softmax(`logits`) and the softmax entropies, one per row,
 * differentiable with respect to the logits. With native kernels registered on the active wasm
 * backend this is one native pass forward and one backward; otherwise the same math in TF.js ops,
 * differentiated by TF.js (its gradients must be registered, as for any other TF.js op).
 * Throws a `RangeError` when shapes do not fit.
 */
export function logProbStats(logits: tf.Tensor2D, targets: tf.Tensor1D | Int32Array): LogProbStats {
  if (logits.rank !== 2) {
    throw new RangeError(`logProbStats: logits must be [rows, vocab], got [${logits.shape}]`);
  }
  const rows = logits.shape[0];
  const count = targets instanceof Int32Array ? targets.length : targets.shape[0];
  if (count !== rows) {
    throw new RangeError(
      `logProbStats: ${count} targets for ${rows} rows of logits; pass one per row`,
    );
  }
  return tf.tidy(() => {
    const t =
      targets instanceof Int32Array
        ? tf.tensor1d(targets, 'int32')
        : targets.dtype === 'int32'
          ? targets
          : tf.cast(targets, 'int32');
    const useNative =
      logits.dtype === 'float32' &&
      logits.shape[1] > 0 &&
      fusedKernelActive(FUSED_KERNELS.logProbStats);
    const both = useNative ? native(logits, t) : composite(logits, t);
    const [logProbs, entropies] = tf.split(both, 2) as [tf.Tensor1D, tf.Tensor1D];
    return { logProbs, entropies };
  });
}
