/**
 * Scoring labels: the log-probs of each candidate label's tokens after its prompt, with each
 * prompt run once and its KV cache shared by its candidates. As numbers when acting (the TWOSOME
 * sampler's label probabilities), or as a differentiable tensor for TWOSOME's update.
 */
import { type CausalLM, candidateTokenLogProbs, scoreContinuations } from '@poad/lora-model';
import type * as tf from '@tensorflow/tfjs-core';
import { idLists } from './action-rows.js';

/** Per prompt, per candidate: the log-prob of each of the candidate's tokens (no gradient). */
export async function labelLogProbs(
  model: CausalLM,
  prompts: readonly Int32Array[],
  candidates: readonly (readonly Int32Array[])[],
): Promise<Float32Array[][]> {
  const out = await scoreContinuations(
    model,
    idLists(prompts),
    candidates.map((c) => idLists(c)),
  );
  return out.map((perPrompt) => perPrompt.map((lp) => Float32Array.from(lp)));
}

/**
 * The same log-probs as one differentiable tensor, every candidate's tokens concatenated in
 * prompt order then candidate order (TWOSOME's update).
 */
export function labelTokenLogProbs(
  model: CausalLM,
  prompts: readonly Int32Array[],
  candidates: readonly (readonly Int32Array[])[],
): tf.Tensor1D {
  return candidateTokenLogProbs(
    model,
    idLists(prompts),
    candidates.map((c) => idLists(c)),
  );
}
