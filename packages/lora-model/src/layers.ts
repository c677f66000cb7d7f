import { activeFusedOps } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';

/**
 * RMSNorm over the last axis: y = x · r · w with r = 1/sqrt(mean(x²) + eps). The backward pass is
 * written out (dx = r·(g − n·mean(g·n)), g = dy·w, n = x·r; dw = Σ_rows dy·n) so it costs a few
 * fused-size ops instead of the autodiff chain. Uses the installed fused op when there is one.
 */
export function rmsNorm(x: tf.Tensor2D, w: tf.Tensor1D, eps: number): tf.Tensor2D {
  const fused = activeFusedOps();
  if (fused) return fused.rmsNorm(x, w, eps);
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, wi, save] = args as [tf.Tensor2D, tf.Tensor1D, tf.GradSaveFunc];
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), eps));
    const n = tf.mul(xi, r);
    save([n, r, wi]);
    return {
      value: tf.mul(n, wi),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [ns, rs, ws] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
        const g = tf.mul(dy, ws);
        const dx = tf.mul(rs, tf.sub(g, tf.mul(ns, tf.mean(tf.mul(g, ns), -1, true))));
        const dw = tf.sum(tf.mul(dy, ns), 0);
        return [dx, dw];
      },
    };
  });
  return f(x, w) as tf.Tensor2D;
}

/** SwiGLU: silu(gate) · up, with a written-out backward pass (or the installed fused op). */
export function swiGlu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  const fused = activeFusedOps();
  if (fused) return fused.swiGlu(gate, up);
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [gi, ui, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
    const s = tf.sigmoid(gi);
    const a = tf.mul(gi, s);
    save([gi, ui, s, a]);
    return {
      value: tf.mul(a, ui),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [gs, us, ss, as] = saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
        // d silu(g)/dg = s · (1 + g·(1 − s))
        const dsilu = tf.mul(ss, tf.add(1, tf.mul(gs, tf.sub(1, ss))));
        return [tf.mul(tf.mul(dy, us), dsilu), tf.mul(dy, as)];
      },
    };
  });
  return f(gate, up) as tf.Tensor2D;
}
