import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../kernels/fused-ops.js';
import { fusedKernelActive } from '../register.js';
import { fusedOp } from './fused-op.js';

function composite<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  return tf.tidy(() =>
    tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), weight),
  ) as T;
}

function native<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps: number): T {
  const f = fusedOp(
    (xi, wi) => {
      const [y, rstd] = tf
        .engine()
        .runKernel(FUSED_KERNELS.rmsNorm, { x: xi!, weight: wi! }, { eps }) as tf.Tensor[];
      return { value: y!, saved: [xi!, wi!, rstd!] };
    },
    (dy, [xs, ws, rs]) =>
      tf.engine().runKernel(FUSED_KERNELS.rmsNormGrad, {
        x: xs!,
        weight: ws!,
        rstd: rs!,
        dy,
      }) as tf.Tensor[],
  );
  return f(x, weight) as T;
}

/**
 * RMSNorm over the last axis: `x / sqrt(mean(x²) + eps) · weight`, differentiable in `x` and
 * `weight`. One native pass each way when native kernels are registered on the active wasm
 * backend; otherwise TF.js ops. Throws a `RangeError` when `weight` does not match the last axis.
 */
export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor1D, eps = 1e-6): T {
  const d = x.shape[x.rank - 1];
  if (x.rank < 1 || weight.rank !== 1 || weight.shape[0] !== d) {
    throw new RangeError(
      `rmsNorm: weight [${weight.shape}] must match the last axis of x [${x.shape}]`,
    );
  }
  const useNative =
    x.dtype === 'float32' && weight.dtype === 'float32' && fusedKernelActive(FUSED_KERNELS.rmsNorm);
  return useNative ? native(x, weight, eps) : composite(x, weight, eps);
}
