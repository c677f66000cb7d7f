import * as tf from '@tensorflow/tfjs-core';
import { multiTensorKernels, packFlat } from './multi-tensor.js';

/** Added to the norm before dividing, as PyTorch's `clip_grad_norm_`. */
const NORM_EPS = 1e-6;

/**
 * Global L2 norm of a gradient list (missing gradients count as zero), as a new scalar. With
 * multi-tensor kernels (webgpu) the gradients are packed into one flat tensor first: three GPU
 * programs whatever their number (the sum then runs in another order: equal within rounding).
 */
export function gradNorm(grads: readonly (tf.Tensor | null)[]): tf.Scalar {
  return tf.tidy(() => {
    const present = grads.filter((g): g is tf.Tensor => g !== null);
    if (present.length === 0) return tf.scalar(0);
    if (multiTensorKernels() && present.every((g) => g.dtype === 'float32'))
      return tf.sqrt(tf.sum(tf.square(packFlat(present)))) as tf.Scalar;
    return tf.sqrt(tf.addN(present.map((g) => tf.sum(tf.square(g))))) as tf.Scalar;
  });
}

/**
 * min(1, maxNorm / (norm + 1e-6)) as PyTorch's `clip_grad_norm_`; 1 (no clipping) when `maxNorm`
 * is 0 (the configs' "off") or null.
 */
export function clipCoefficient(norm: number, maxNorm: number | null): number {
  return maxNorm === null || maxNorm === 0 ? 1 : Math.min(1, maxNorm / (norm + NORM_EPS));
}

/** `grads` multiplied by `coef` (new tensors; the caller disposes them). */
export function scaleGrads(
  grads: readonly (tf.Tensor | null)[],
  coef: number,
): (tf.Tensor | null)[] {
  return grads.map((g) => (g === null ? null : tf.mul(g, coef)));
}

/**
 * Global L2 norm of a gradient list (missing gradients count as zero) and, when `maxNorm` is
 * positive, the list rescaled by min(1, maxNorm / (norm + 1e-6)) as PyTorch's `clip_grad_norm_`. The
 * norm is read asynchronously (GPU backends have no synchronous read). Returns new tensors; the
 * caller disposes both lists.
 */
export async function clipGradNorm(
  grads: readonly (tf.Tensor | null)[],
  maxNorm: number | null,
): Promise<{ grads: (tf.Tensor | null)[]; norm: number }> {
  const t = gradNorm(grads);
  const norm = ((await t.data()) as Float32Array)[0]!;
  t.dispose();
  return { grads: scaleGrads(grads, clipCoefficient(norm, maxNorm)), norm };
}
