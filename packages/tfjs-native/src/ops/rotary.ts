import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../kernels/fused-ops.js';
import { fusedKernelActive } from '../register.js';
import { fusedOp } from './fused-op.js';

function composite(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, heads: number): tf.Tensor2D {
  return tf.tidy(() => {
    const [rows, width] = x.shape;
    const half = width / heads / 2;
    const xs = tf.reshape(x, [rows, heads, 2, half]);
    const [x1, x2] = tf.split(xs, 2, 2) as [tf.Tensor4D, tf.Tensor4D];
    const c = tf.reshape(cos, [rows, 1, 1, half]);
    const s = tf.reshape(sin, [rows, 1, 1, half]);
    const y1 = tf.sub(tf.mul(x1, c), tf.mul(x2, s));
    const y2 = tf.add(tf.mul(x2, c), tf.mul(x1, s));
    return tf.reshape(tf.concat([y1, y2], 2), [rows, width]);
  });
}

function native(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, heads: number): tf.Tensor2D {
  // The gradient map is the rotation by the opposite angles: the same kernel, transposed.
  const rope = (input: tf.Tensor, c: tf.Tensor, s: tf.Tensor, transpose: boolean) =>
    tf
      .engine()
      .runKernel(
        FUSED_KERNELS.rope,
        { x: input, cos: c, sin: s },
        { heads, transpose },
      ) as tf.Tensor;
  const f = fusedOp(
    (xi) => ({ value: rope(xi!, cos, sin, false), saved: [cos, sin] }),
    (dy, [cs, ss]) => rope(dy, cs!, ss!, true),
  );
  return f(x) as tf.Tensor2D;
}

/**
 * Rotary position embedding in the rotate-half form, for rows of `heads` heads laid side by
 * side: `x` is [rows, heads·headDim], `cos` and `sin` are [rows, headDim/2] (the angles of each
 * row's position). Per head, with halves x1 and x2: `[x1·cos − x2·sin, x2·cos + x1·sin]`.
 * Differentiable in `x` (the tables are constants). One native pass each way when native kernels
 * are registered on the active wasm backend; otherwise TF.js ops.
 */
export function rotaryEmbedding(
  x: tf.Tensor2D,
  cos: tf.Tensor2D,
  sin: tf.Tensor2D,
  heads: number,
): tf.Tensor2D {
  const [rows, width] = x.shape;
  if (!Number.isInteger(heads) || heads < 1 || width % (2 * heads) !== 0) {
    throw new RangeError(
      `rotaryEmbedding: ${width} columns do not split into ${heads} heads of even size`,
    );
  }
  const half = width / heads / 2;
  for (const [name, t] of [
    ['cos', cos],
    ['sin', sin],
  ] as const) {
    if (t.rank !== 2 || t.shape[0] !== rows || t.shape[1] !== half) {
      throw new RangeError(`rotaryEmbedding: ${name} must be [${rows}, ${half}], got [${t.shape}]`);
    }
  }
  const useNative =
    x.dtype === 'float32' &&
    cos.dtype === 'float32' &&
    sin.dtype === 'float32' &&
    fusedKernelActive(FUSED_KERNELS.rope);
  return useNative ? native(x, cos, sin, heads) : composite(x, cos, sin, heads);
}
