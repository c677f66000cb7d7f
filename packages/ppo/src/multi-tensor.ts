import * as tf from '@tensorflow/tfjs-core';

/*
 * Multi-tensor kernels a TF.js backend may provide: packing many float32 tensors into one flat
 * tensor and back (buffer copies, no GPU program), and AdamW and Lion steps over flat tensors in
 * one program, the gradient-norm clip coefficient computed from a norm that stays on the device.
 * `@poad/tfjs-kernels` registers them for the webgpu backend under these names. Where the active
 * backend has them, the optimisers, the gradient norm and the checkpoint reads here take a
 * constant number of GPU programs and reads whatever the number of tensors; elsewhere (cpu,
 * wasm) they compute per tensor, as they always did.
 */

/** Kernel names of the multi-tensor ops (the same as `@poad/tfjs-kernels`' registrations). */
export const MULTI_TENSOR_KERNELS = {
  /** float32 tensors (an array of inputs) → their values one after the other, [Σ sizes]. */
  pack: 'PoadPackFlat',
  /** `{ flat }` [Σ sizes] with the attribute `shapes` → tensors of those shapes. */
  unpack: 'PoadUnpackFlat',
  /**
   * `{ p, g, m, v, norm }` (flat [L], norm [1]) with attributes maxNorm (0: no clipping),
   * beta1, beta2, decay, bc2, eps, lrOverBc1 → [p', m', v']; a norm that is not finite returns
   * p, m, v unchanged (the step is skipped on the device; see {@link deviceGate}).
   */
  adamW: 'PoadAdamW',
  /**
   * `{ p, g, m, norm }` with attributes maxNorm, beta1, beta2, decay, lr → [p', m'] (a norm
   * that is not finite: p, m unchanged).
   */
  lion: 'PoadLion',
} as const;

/** Whether the active backend has every multi-tensor kernel. */
export function multiTensorKernels(): boolean {
  const backend = tf.getBackend();
  return Object.values(MULTI_TENSOR_KERNELS).every((k) => tf.getKernel(k, backend) !== undefined);
}

/** The values of float32 `tensors` one after the other, as one flat tensor (multi-tensor backends). */
export function packFlat(tensors: readonly tf.Tensor[]): tf.Tensor1D {
  return tf
    .engine()
    .runKernel(MULTI_TENSOR_KERNELS.pack, tensors as unknown as tf.NamedTensorMap) as tf.Tensor1D;
}

/** `flat` cut into tensors of `shapes`, in order (multi-tensor backends). */
export function unpackFlat(flat: tf.Tensor, shapes: readonly (readonly number[])[]): tf.Tensor[] {
  return tf.engine().runKernel(MULTI_TENSOR_KERNELS.unpack, { flat }, {
    shapes: shapes.map((s) => [...s]),
  } as unknown as tf.NamedAttrMap) as tf.Tensor[];
}

/** Assigns the values of `flat` (a multi-tensor step's result, in variable order) to `variables`. */
export function assignFlat(variables: readonly tf.Variable[], flat: tf.Tensor): void {
  tf.tidy(() => {
    unpackFlat(
      flat,
      variables.map((x) => x.shape),
    ).forEach((x, i) => {
      variables[i]!.assign(x);
    });
  });
}

/**
 * `norm` with the finiteness of `checks` folded in, for a fused step that the device takes or
 * skips: `norm + Σ 0·x` over the checks is exactly `norm` when every check is finite, and NaN when
 * one is NaN or ±∞ (each product on its own, so finite values that would overflow a sum count as
 * finite, as they do on the host). A fused step given it is skipped when the norm or any check is
 * not finite, the decision the host takes after reading them.
 */
export function deviceGate(norm: tf.Scalar, checks: readonly tf.Scalar[]): tf.Scalar {
  if (checks.length === 0) return tf.clone(norm);
  return tf.tidy(() => tf.add(norm, tf.sum(tf.mul(tf.stack([...checks]), 0))) as tf.Scalar);
}

/**
 * The gradient-norm clipping a step applies: gradients × min(1, maxNorm / (norm + 1e-6)), as
 * PyTorch's `clip_grad_norm_`; `maxNorm` 0 or null is no clipping. `norm` is the global norm as a
 * number read from the device, or as a scalar tensor that stays on it.
 */
export interface GradClip {
  readonly norm: number | tf.Scalar;
  readonly maxNorm: number | null;
}

/** `clip.norm` as a [1] tensor (new), and maxNorm as a number (0 = off). */
export function clipInputs(clip: GradClip | undefined): { norm: tf.Tensor1D; maxNorm: number } {
  if (clip === undefined) return { norm: tf.tensor1d([0]), maxNorm: 0 };
  const maxNorm = clip.maxNorm ?? 0;
  const { norm } = clip;
  return { norm: typeof norm === 'number' ? tf.tensor1d([norm]) : tf.reshape(norm, [1]), maxNorm };
}
