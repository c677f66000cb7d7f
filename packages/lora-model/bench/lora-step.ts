// The LoRA step that the profile bench times and the GPU-count test counts, one piece of code for
// both: the forward and backward pass of the mean negative log-prob, then the trainers' optimiser
// (the global gradient norm and a clipped AdamW step of @poad/ppo), each in its GPU phase, and
// the loss read back.
import { type Adam, gradNorm } from '@poad/ppo';
import { setGpuPhase } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../src/causal-lm.js';

/** One LoRA step of `model` with `adam` over its policy variables; returns the loss. */
export async function loraStep(
  model: CausalLM,
  adam: Adam,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
): Promise<number> {
  setGpuPhase('gradients');
  const vars = model.policyVariables();
  const { value, grads } = tf.variableGrads(
    () => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
    vars,
  );
  setGpuPhase('optimiser');
  const g = vars.map((v) => grads[v.name] ?? null);
  const norm = gradNorm(g);
  adam.step(g, { norm, maxNorm: 1 });
  tf.dispose([norm, ...Object.values(grads)]);
  setGpuPhase('read');
  const loss = (await value.data())[0]!;
  value.dispose();
  return loss;
}
