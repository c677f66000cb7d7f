import * as tf from '@tensorflow/tfjs-core';

/** Turn a fresh tensor into a trainable variable without leaving the initial tensor alive. */
export function toVariable<T extends tf.Tensor>(t: T): tf.Variable & T {
  const v = tf.variable(t, true);
  t.dispose();
  return v as tf.Variable & T;
}

/**
 * `tf.tidy` for results that nest tensors in plain objects and arrays (for example a KV cache):
 * every tensor reachable from the result survives, everything else is freed.
 */
export function tidyNested<T>(fn: () => T): T {
  return tf.tidy(fn as unknown as () => tf.TensorContainer) as unknown as T;
}
