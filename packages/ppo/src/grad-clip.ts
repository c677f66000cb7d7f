import * as tf from '@tensorflow/tfjs-core';

/** Added to the norm before dividing, as PyTorch's `clip_grad_norm_`. */
const NORM_EPS = 1e-6;

/** Global L2 norm of a gradient list (missing gradients count as zero), as a new scalar. */
export function gradNorm(grads: readonly (tf.Tensor | null)[]): tf.Scalar {
  return tf.tidy(() => {
    const parts = grads.filter((g): g is tf.Tensor => g !== null).map((g) => tf.sum(tf.square(g)));
    if (parts.length === 0) return tf.scalar(0);
    return tf.sqrt(tf.addN(parts)) as tf.Scalar;
  });
}

/** `x` as the unevaluated sum hi + lo of two float32 numbers. */
function float32Pair(x: number): [number, number] {
  const hi = Math.fround(x);
  return [hi, Math.fround(x - hi)];
}

/** Dekker's split: hi + lo = a exactly, each with at most 12 significant bits. */
function split(a: tf.Scalar): [tf.Scalar, tf.Scalar] {
  const c = tf.mul(a, 4097);
  const hi = tf.sub(c, tf.sub(c, a)) as tf.Scalar;
  return [hi, tf.sub(a, hi)];
}

/** The rounding error of the float32 product a·b: a·b = fl(a·b) + error, exactly. */
function productError(a: tf.Scalar, b: tf.Scalar, p: tf.Scalar): tf.Scalar {
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  const e = tf.add(tf.add(tf.sub(tf.mul(ah, bh), p), tf.mul(ah, bl)), tf.mul(al, bh));
  return tf.add(e, tf.mul(al, bl));
}

/**
 * The clip coefficient min(1, maxNorm / (norm + 1e-6)) as a float32 scalar computed on the
 * device, so that no read is needed before the optimiser step. With IEEE float32 arithmetic
 * (cpu, wasm) it equals the float64 quotient rounded to float32, which the host computed
 * before: the denominator is kept as a float32 pair hi + lo (Knuth's two-sum), the quotient of
 * the leading parts is corrected by its exact remainder (Dekker's product), and only the final
 * sum is rounded. The pair carries about 44 bits, so only a quotient that close to a float32
 * rounding boundary could round the other way (none did in millions of random norms). A norm
 * too large for the split (above ~1e34) or infinite falls back to the plain quotient (0 for an
 * infinite norm); a NaN norm gives NaN, as before.
 */
export function clipCoefficient(norm: tf.Scalar, maxNorm: number): tf.Scalar {
  const [mHi, mLo] = float32Pair(maxNorm);
  const [eHi, eLo] = float32Pair(NORM_EPS);
  return tf.tidy(() => {
    // Denominator norm + 1e-6 = sHi + sLo.
    const sHi = tf.add(norm, eHi) as tf.Scalar;
    const v = tf.sub(sHi, norm);
    const sumError = tf.add(tf.sub(norm, tf.sub(sHi, v)), tf.sub(eHi, v));
    const sLo = tf.add(sumError, eLo) as tf.Scalar;
    // q1 = fl(mHi / sHi); the remainder maxNorm − q1·(sHi + sLo), divided by sHi, corrects it.
    const q1 = tf.div(mHi, sHi) as tf.Scalar;
    const p = tf.mul(q1, sHi) as tf.Scalar;
    const remainder = tf.sub(
      tf.add(tf.sub(tf.sub(mHi, p), productError(q1, sHi, p)), mLo),
      tf.mul(q1, sLo),
    );
    const q = tf.add(q1, tf.div(remainder, sHi));
    // q is NaN for a NaN norm (q1 keeps it, as Math.min did) or a norm the split cannot take.
    return tf.where(tf.isNaN(q), q1, tf.minimum(1, q)) as tf.Scalar;
  });
}

/**
 * `grads` rescaled by `clipCoefficient(norm, maxNorm)`, or copied when `maxNorm` is null.
 * Returns new tensors; the caller disposes them.
 */
export function scaleByNorm(
  grads: readonly (tf.Tensor | null)[],
  norm: tf.Scalar,
  maxNorm: number | null,
): (tf.Tensor | null)[] {
  const coef = maxNorm === null ? tf.scalar(1) : clipCoefficient(norm, maxNorm);
  const out = grads.map((g) => (g === null ? null : tf.mul(g, coef)));
  coef.dispose();
  return out;
}

/**
 * Global L2 norm of a gradient list (missing gradients count as zero) and, when `maxNorm` is
 * set, the list rescaled by min(1, maxNorm / (norm + 1e-6)) as PyTorch's `clip_grad_norm_`.
 * Everything stays on the device: the norm is a scalar tensor (read it asynchronously).
 * Returns new tensors; the caller disposes the input list and both outputs.
 */
export function clipGradNorm(
  grads: readonly (tf.Tensor | null)[],
  maxNorm: number | null,
): { grads: (tf.Tensor | null)[]; norm: tf.Scalar } {
  const norm = gradNorm(grads);
  return { grads: scaleByNorm(grads, norm, maxNorm), norm };
}
