import {
  frozenProduct,
  type PackedDtype,
  type ProductChoice,
  packedMatMul,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';

/**
 * A dense layer weight in TF.js layout: `kernel` is [in, out] so `y = x · kernel` is a plain 2-D
 * matmul (the fast path on wasm). On CPU backends, frozen weights also keep `kernelT` ([out, in],
 * the PyTorch layout) so the backward pass never needs a transposed matmul; on GPUs, where a
 * transposed product costs the same, a frozen weight is only flagged `frozen` and not stored twice.
 */
export interface LinearWeight {
  kernel: tf.Tensor2D;
  /** Frozen weights on CPU backends: the cached transpose used for the input gradient. */
  kernelT?: tf.Tensor2D;
  /** A constant weight (only the input gets a gradient); implied by `kernelT`. */
  frozen?: boolean;
  /**
   * A frozen weight kept in its checkpoint's 16-bit precision (webgpu): `kernel` is then int32
   * [in, out/2], two values per element (`@poad/tfjs-kernels`' packed layout).
   */
  packed?: PackedDtype;
  /**
   * A frozen float32 `kernel` held as [out, in] (the PyTorch layout), multiplied transposed: a
   * head tied to the embedding on webgpu, which then needs no transposed copy.
   */
  transposed?: boolean;
  /**
   * How the products of a frozen float32 weight run on webgpu (`@poad/tfjs-kernels`'
   * `frozenProduct`): TF.js's matmul (unset, `tfjs`), the tiled program, or per shape as a measured
   * plan says (`CausalLM.useProducts`).
   */
  products?: ProductChoice;
  bias?: tf.Tensor1D;
}

/**
 * Whether the active backend multiplies by a transposed operand as fast as by a plain one, so
 * that gradients need no explicit transposes and frozen weights no cached transpose. TF.js's
 * wasm and cpu kernels fall to a slow loop on transposed operands; GPU programs do not.
 */
export function transposedProductsAreFast(): boolean {
  return tf.getBackend() === 'webgpu';
}

/**
 * `x · w` for a frozen `w` whose transpose is given. Only the input gets a gradient; the backward
 * pass is `dy · wT`, a plain 2-D matmul.
 */
export function frozenMatMul(x: tf.Tensor2D, w: tf.Tensor2D, wT: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    // Saved (a cheap reference clone) so a transient `wT` survives until the backward pass.
    save([wT]);
    return {
      value: tf.matMul(xi, w),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.matMul(dy as tf.Tensor2D, saved[0] as tf.Tensor2D),
    };
  });
  return f(x) as tf.Tensor2D;
}

/**
 * `x · w` where both sides may be trainable. On CPU backends the backward pass materialises the
 * transposes explicitly (`dy · transpose(w)` and `transpose(x) · dy`) so TF.js never takes its
 * slow transposed-matmul path; on GPUs it multiplies by the transposed operands directly.
 */
export function trainableMatMul(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, wi, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
    save([xi, wi]);
    return {
      value: tf.matMul(xi, wi),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
        const g = dy as tf.Tensor2D;
        if (transposedProductsAreFast()) {
          return [tf.matMul(g, ws, false, true), tf.matMul(xs, g, true, false)];
        }
        return [tf.matMul(g, tf.transpose(ws)), tf.matMul(tf.transpose(xs), g)];
      },
    };
  });
  return f(x, w) as tf.Tensor2D;
}

/** Apply a dense layer to 2-D input [n, in] → [n, out]. */
export function linear(x: tf.Tensor2D, w: LinearWeight): tf.Tensor2D {
  const y = w.packed
    ? packedMatMul(x, w.kernel, w.packed)
    : w.kernelT
      ? frozenMatMul(x, w.kernel, w.kernelT)
      : w.frozen
        ? frozenProduct(x, w.kernel, w.transposed === true, w.products ?? 'tfjs')
        : trainableMatMul(x, w.kernel);
  return w.bias ? tf.add(y, w.bias) : y;
}

/** A frozen weight from its [in, out] kernel: with a cached transpose where that is faster. */
export function frozenWeight(kernel: tf.Tensor2D, kernelT?: tf.Tensor2D): LinearWeight {
  if (transposedProductsAreFast()) {
    kernelT?.dispose();
    return { kernel, frozen: true };
  }
  return { kernel, kernelT: kernelT ?? tf.transpose(kernel) };
}
