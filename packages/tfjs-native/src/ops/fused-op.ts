import * as tf from '@tensorflow/tfjs-core';

/**
 * A differentiable op on a pair of fused kernels: `forward` runs on the op's inputs and returns
 * its value and the tensors the backward pass needs; `backward` maps dy and those tensors to the
 * gradients of the inputs (as `tf.customGrad` takes them).
 */
export function fusedOp(
  forward: (...inputs: tf.Tensor[]) => { value: tf.Tensor; saved: tf.Tensor[] },
  backward: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.Tensor | tf.Tensor[],
): (...inputs: tf.Tensor[]) => tf.Tensor {
  return tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const { value, saved } = forward(...(args.slice(0, -1) as tf.Tensor[]));
    save(saved);
    return { value, gradFunc: backward };
  });
}
