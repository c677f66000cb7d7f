/**
 * The log-probs the rollout records and the update differentiates: log π(w_k | prompt, w_<k) of
 * each action token and the entropy before it, under the LoRA policy or, as the group-relative
 * algorithms' reference, under the frozen base (adapter off); over the full vocabulary, or
 * renormalised over the label tree's continuations when the batch carries `allowed`.
 */
import { type CausalLM, type TokenStats, tokenStats } from '@poad/lora-model';
import type { TokenBatch } from '@poad/ppo';
import { idLists } from './action-rows.js';

/** Which weights score the tokens: the policy (LoRA adapter on) or the base model (off). */
export type Scorer = 'policy' | 'base';

/** Log-probs and entropies of every action token of `batch`, concatenated in sample order. */
export function tokenLogProbs(model: CausalLM, batch: TokenBatch, scorer: Scorer): TokenStats {
  return tokenStats(model, idLists(batch.prompts), idLists(batch.actions), {
    ...(scorer === 'base' ? { adapter: false } : {}),
    ...(batch.allowed ? { allowed: batch.allowed } : {}),
  });
}
