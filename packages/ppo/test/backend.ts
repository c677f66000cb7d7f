import '@tensorflow/tfjs-backend-cpu';
// Gradient functions are registered by whoever loads TF.js (the app); tests do it here.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';

/** Tests run on the pure-JS CPU backend (libraries never pick one themselves). */
export async function useCpu(): Promise<void> {
  await tf.setBackend('cpu');
  await tf.ready();
}
