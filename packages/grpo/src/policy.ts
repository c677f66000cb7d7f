import type { TokenBatch, TokenPolicy } from '@poad/ppo';
import type { Tensor1D, Tensor2D } from '@tensorflow/tfjs-core';

/**
 * The policy a group-relative trainer needs: `@poad/ppo`'s `TokenPolicy` (its critic members may
 * be empty: there is no critic), and, for a KL term to the reference, the reference policy's
 * per-token log-probs of a batch (the base model with its adapters off), padded `[B, width]` or
 * flat as `scoreTokens` returns them, renormalised over `batch.allowed` when given. Not
 * differentiated.
 */
export interface GroupPolicy extends TokenPolicy {
  referenceLogProbs?(batch: TokenBatch): Tensor2D | Tensor1D;
}
