import * as tf from '@tensorflow/tfjs-core';

/**
 * The loss terms of PPO, each named as in CleanRL. All take per-element tensors of one shape
 * (`[B, L]` for token level, `[B]` for action level) and return per-element tensors; the
 * trainer reduces them with {@link maskedSum} over real tokens.
 */

/** Clipped surrogate per element: max(−ρ·Â, −clip(ρ, 1±ε)·Â), with ρ = exp(logπ_new − logπ_old). */
export function policyLoss(
  logpNew: tf.Tensor,
  logpOld: tf.Tensor,
  advantages: tf.Tensor,
  clip: number,
): tf.Tensor {
  return tf.tidy(() => {
    const ratio = tf.exp(tf.sub(logpNew, logpOld));
    const unclipped = tf.mul(tf.neg(ratio), advantages);
    const clipped = tf.mul(tf.neg(tf.clipByValue(ratio, 1 - clip, 1 + clip)), advantages);
    return tf.maximum(unclipped, clipped);
  });
}

/** Entropy bonus per element: −c_H·H (added to the policy loss). */
export function entropyBonus(entropy: tf.Tensor, entropyCoef: number): tf.Tensor {
  return tf.mul(entropy, -entropyCoef);
}

/** Huber loss per element (correct form): e²/2 if |e| ≤ δ, else δ·(|e| − δ/2). */
export function huber(error: tf.Tensor, delta: number): tf.Tensor {
  return tf.tidy(() => {
    const a = tf.abs(error);
    const quad = tf.mul(tf.square(error), 0.5);
    const lin = tf.mul(tf.sub(a, delta / 2), delta);
    return tf.where(tf.lessEqual(a, delta), quad, lin);
  });
}

/**
 * Clipped value loss per element: max(f(R − v_clip), f(R − v_new)) with
 * v_clip = v_old + clamp(v_new − v_old, ±ε) and f(e) = e²/2 ('mse') or {@link huber}; with
 * `clip` null, the unclipped f(R − v_new) (`valueClip` off).
 */
export function valueLoss(
  vNew: tf.Tensor,
  vOld: tf.Tensor,
  returns: tf.Tensor,
  clip: number | null,
  kind: 'mse' | 'huber',
  huberDelta: number,
): tf.Tensor {
  return tf.tidy(() => {
    const f = (e: tf.Tensor) => (kind === 'mse' ? tf.mul(tf.square(e), 0.5) : huber(e, huberDelta));
    if (clip === null) return f(tf.sub(returns, vNew));
    const vClip = tf.add(vOld, tf.clipByValue(tf.sub(vNew, vOld), -clip, clip));
    return tf.maximum(f(tf.sub(returns, vClip)), f(tf.sub(returns, vNew)));
  });
}

/** The value loss's clip of a config: ε (`clip`), or null with `valueClip` off. */
export function valueClipOf(config: { clip: number; valueClip?: boolean }): number | null {
  return config.valueClip === false ? null : config.clip;
}

/** Approximate KL(π_old ‖ π_new) per element: (ρ − 1) − log ρ (always ≥ 0). */
export function approxKl(logpNew: tf.Tensor, logpOld: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const logRatio = tf.sub(logpNew, logpOld);
    return tf.sub(tf.sub(tf.exp(logRatio), 1), logRatio);
  });
}

/** 1 where the ratio left [1−ε, 1+ε], else 0. */
export function clipIndicator(logpNew: tf.Tensor, logpOld: tf.Tensor, clip: number): tf.Tensor {
  return tf.tidy(() =>
    tf.cast(tf.greater(tf.abs(tf.sub(tf.exp(tf.sub(logpNew, logpOld)), 1)), clip), 'float32'),
  );
}

/**
 * Σ mask·x, reading padded entries as exactly 0 whatever they hold (NaN and ±∞ included), so
 * padding can never reach a loss or its gradient.
 */
export function maskedSum(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.sum(tf.where(tf.cast(mask, 'bool'), x, tf.zerosLike(x))));
}

/**
 * Name of the fused token-level policy loss kernel (`@poad/tfjs-kernels` registers it for the
 * webgpu backend as `PPO_LOSS_KERNELS.tokenLoss`): inputs `{ lpNew, lpOld, adv, ent, mask }`, the
 * attribute `clip`, and four scalar outputs, the masked sums of {@link policyLoss}, the entropy,
 * {@link approxKl} and {@link clipIndicator} (entries where the mask is 0 count as 0 whatever they
 * hold; all four NaN when an entry counted is not finite), differentiable in lpNew and ent.
 */
export const PPO_TOKEN_LOSS_KERNEL = 'PoadPpoTokenLoss';

/**
 * Whether the active backend has the fused token-level loss (webgpu with `@poad/tfjs-kernels`).
 * Where it has not, the token-level losses compose the same math from the functions above.
 */
export function fusedTokenLoss(): boolean {
  return tf.getKernel(PPO_TOKEN_LOSS_KERNEL, tf.getBackend()) !== undefined;
}
