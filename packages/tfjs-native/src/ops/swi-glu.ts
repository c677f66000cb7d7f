import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../kernels/fused-ops.js';
import { fusedKernelActive } from '../register.js';
import { fusedOp } from './fused-op.js';

function native<T extends tf.Tensor>(gate: T, up: T): T {
  const f = fusedOp(
    (g, u) => ({
      value: tf.engine().runKernel(FUSED_KERNELS.swiGlu, { gate: g!, up: u! }) as tf.Tensor,
      saved: [g!, u!],
    }),
    (dy, [gs, us]) =>
      tf.engine().runKernel(FUSED_KERNELS.swiGluGrad, { gate: gs!, up: us!, dy }) as tf.Tensor[],
  );
  return f(gate, up) as T;
}

/**
 * The SwiGLU gate `silu(gate) · up = gate · sigmoid(gate) · up`, differentiable in both inputs.
 * One native pass each way when native kernels are registered on the active wasm backend and the
 * shapes are equal; otherwise TF.js ops (which also broadcast).
 */
export function swiGlu<T extends tf.Tensor>(gate: T, up: T): T {
  const same =
    gate.rank === up.rank && gate.shape.every((d, i) => d === up.shape[i]) && gate.size > 0;
  const useNative =
    same &&
    gate.dtype === 'float32' &&
    up.dtype === 'float32' &&
    fusedKernelActive(FUSED_KERNELS.swiGlu);
  if (useNative) return native(gate, up);
  return tf.tidy(() => tf.mul(tf.mul(gate, tf.sigmoid(gate)), up)) as T;
}
