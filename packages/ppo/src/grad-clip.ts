import * as tf from '@tensorflow/tfjs-core';

/**
 * Global L2 norm of a gradient list (missing gradients count as zero) and, when `maxNorm` is
 * set, the list rescaled by min(1, maxNorm / (norm + 1e-6)) as PyTorch's `clip_grad_norm_`.
 * Returns new tensors; the caller disposes both lists.
 */
export function clipGradNorm(
  grads: readonly (tf.Tensor | null)[],
  maxNorm: number | null,
): { grads: (tf.Tensor | null)[]; norm: number } {
  const norm = tf.tidy(() => {
    const parts = grads.filter((g): g is tf.Tensor => g !== null).map((g) => tf.sum(tf.square(g)));
    if (parts.length === 0) return tf.scalar(0);
    return tf.sqrt(tf.addN(parts));
  });
  const n = norm.dataSync()[0]!;
  norm.dispose();
  const coef = maxNorm === null ? 1 : Math.min(1, maxNorm / (n + 1e-6));
  return { grads: grads.map((g) => (g === null ? null : tf.mul(g, coef))), norm: n };
}
