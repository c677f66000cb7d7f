import * as tf from '@tensorflow/tfjs-core';

const identityWithoutGradient = tf.customGrad((x) => ({
  value: tf.clone(x as tf.Tensor),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
}));

/** The identity whose gradient is zero: a value treated as a constant by the gradient. */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  return identityWithoutGradient(x) as T;
}
