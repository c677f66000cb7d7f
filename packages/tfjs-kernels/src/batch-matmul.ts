import * as tf from '@tensorflow/tfjs-core';

/*
 * Batched matmul C[i] = op(A[i]) · op(B[i]) over 3-D tensors.
 *
 * TF.js's wasm backend runs batched (and transposed) matmuls in a generic loop at about 1 GFLOP/s,
 * while its depthwise convolution goes through XNNPACK. A batch of products is one depthwise
 * convolution: put the batch on the channel axis, the shared dimension K on the width, and each
 * product's right-hand matrix in that channel's filter (channel multiplier N):
 *   input  [1, M, K, nb]   input[0, m, k, i]  = A[i][m][k]
 *   filter [1, K, nb, N]   filter[0, k, i, n] = B[i][k][n]
 *   output [1, M, 1, nb·N] output[0, m, 0, i·N + n] = Σ_k A[i][m][k] · B[i][k][n]
 * Measured 2–4.5× faster than the batched matmul kernel on attention shapes, transposes included.
 */

/** How {@link batchMatMul} computes: see {@link setBatchMatMulRoute}. */
export type BatchMatMulRoute = 'auto' | 'depthwise' | 'matmul';

let route: BatchMatMulRoute = 'auto';

/**
 * Choose how attention's batched matmuls run: `auto` (default) uses the depthwise form on wasm
 * for products of at least 2^17 multiply-adds and `tf.matMul` elsewhere; `matmul` always uses the
 * registered `BatchMatMul` kernel (pick it when a faster native kernel is registered);
 * `depthwise` always uses the depthwise form.
 */
export function setBatchMatMulRoute(r: BatchMatMulRoute): void {
  if (r !== 'auto' && r !== 'depthwise' && r !== 'matmul') {
    throw new TypeError(
      `setBatchMatMulRoute: unknown route "${String(r)}"; use auto, depthwise or matmul`,
    );
  }
  route = r;
}

/** Multiply-adds below which the plain batched kernel is used. */
const SMALL_PRODUCT = 1 << 17;

function viaDepthwise(
  a: tf.Tensor3D,
  b: tf.Tensor3D,
  transA: boolean,
  transB: boolean,
): tf.Tensor3D {
  const nb = a.shape[0];
  const m = transA ? a.shape[2] : a.shape[1];
  const k = transA ? a.shape[1] : a.shape[2];
  const n = transB ? b.shape[1] : b.shape[2];
  const input = tf.reshape(tf.transpose(a, transA ? [2, 1, 0] : [1, 2, 0]), [
    1,
    m,
    k,
    nb,
  ]) as tf.Tensor4D;
  const filter = tf.reshape(tf.transpose(b, transB ? [2, 0, 1] : [1, 0, 2]), [
    1,
    k,
    nb,
    n,
  ]) as tf.Tensor4D;
  const out = tf.depthwiseConv2d(input, filter, 1, 'valid');
  return tf.transpose(tf.reshape(out, [m, nb, n]), [1, 0, 2]) as tf.Tensor3D;
}

/**
 * The depthwise-convolution form of {@link batchMatMul}, differentiable w.r.t. both inputs
 * (the backward pass uses the same form). Any backend with `DepthwiseConv2dNative` runs it.
 */
export function depthwiseBatchMatMul(
  a: tf.Tensor3D,
  b: tf.Tensor3D,
  transA = false,
  transB = false,
): tf.Tensor3D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [ai, bi, save] = args as [tf.Tensor3D, tf.Tensor3D, tf.GradSaveFunc];
    save([ai, bi]);
    return {
      value: viaDepthwise(ai, bi, transA, transB),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [as, bs] = saved as [tf.Tensor3D, tf.Tensor3D];
        const g = dy as tf.Tensor3D;
        if (!transA && !transB)
          return [viaDepthwise(g, bs, false, true), viaDepthwise(as, g, true, false)];
        if (!transA && transB)
          return [viaDepthwise(g, bs, false, false), viaDepthwise(g, as, true, false)];
        if (transA && !transB)
          return [viaDepthwise(bs, g, false, true), viaDepthwise(as, g, false, false)];
        return [viaDepthwise(bs, g, true, true), viaDepthwise(g, as, true, true)];
      },
    };
  });
  return f(a, b) as tf.Tensor3D;
}

/**
 * C[i] = op(A[i]) · op(B[i]) for [batch, rows, cols] tensors (op = transpose when flagged).
 * On wasm it runs as a depthwise convolution (see above); elsewhere it is `tf.matMul`.
 * Differentiable w.r.t. both inputs.
 */
export function batchMatMul(
  a: tf.Tensor3D,
  b: tf.Tensor3D,
  transA = false,
  transB = false,
  backend: string = tf.getBackend(),
): tf.Tensor3D {
  if (route === 'matmul') return tf.matMul(a, b, transA, transB);
  if (route === 'depthwise') return depthwiseBatchMatMul(a, b, transA, transB);
  if (backend === 'wasm') {
    const m = transA ? a.shape[2] : a.shape[1];
    const k = transA ? a.shape[1] : a.shape[2];
    const n = transB ? b.shape[1] : b.shape[2];
    // Small products are dominated by the extra transposes: keep the plain kernel there.
    if (a.shape[0] * m * k * n >= SMALL_PRODUCT) return depthwiseBatchMatMul(a, b, transA, transB);
  }
  return tf.matMul(a, b, transA, transB);
}
