import * as tf from '@tensorflow/tfjs-core';

/**
 * A dense layer weight in TF.js layout: `kernel` is [in, out] so `y = x · kernel` is a plain 2-D
 * matmul (the fast path on wasm). For frozen weights `kernelT` ([out, in], the PyTorch layout) is
 * kept so the backward pass never needs a transposed matmul.
 */
export interface LinearWeight {
  kernel: tf.Tensor2D;
  /** Present for frozen weights: the cached transpose used for the input gradient. */
  kernelT?: tf.Tensor2D;
  bias?: tf.Tensor1D;
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
 * `x · w` where both sides may be trainable. The backward pass materialises the transposes
 * explicitly (`dy · transpose(w)` and `transpose(x) · dy`) so TF.js never takes its slow
 * transposed-matmul path.
 */
export function trainableMatMul(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, wi, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
    save([xi, wi]);
    return {
      value: tf.matMul(xi, wi),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
        return [
          tf.matMul(dy as tf.Tensor2D, tf.transpose(ws)),
          tf.matMul(tf.transpose(xs), dy as tf.Tensor2D),
        ];
      },
    };
  });
  return f(x, w) as tf.Tensor2D;
}

/** Apply a dense layer to 2-D input [n, in] → [n, out]. */
export function linear(x: tf.Tensor2D, w: LinearWeight): tf.Tensor2D {
  const y = w.kernelT ? frozenMatMul(x, w.kernel, w.kernelT) : trainableMatMul(x, w.kernel);
  return w.bias ? tf.add(y, w.bias) : y;
}
