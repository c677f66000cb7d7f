// The group-relative algorithms' language-model policy: LmPolicy plus the reference log-probs.
import type { TokenBatch } from '@poad/ppo';
import type * as tf from '@tensorflow/tfjs-core';
import { LmPolicy } from './lm-policy.js';
import { tokenLogProbs } from './token-log-probs.js';

/**
 * The language-model policy of the group-relative algorithms (`@poad/grpo`): `LmPolicy` on a
 * model without a value head, plus the reference policy's token log-probs for the KL term — the
 * same model with its LoRA adapter switched off (the base model), renormalised over
 * `batch.allowed` when the token space is the labels'.
 */
export class GroupLmPolicy extends LmPolicy {
  referenceLogProbs(batch: TokenBatch): tf.Tensor1D | tf.Tensor2D {
    const s = tokenLogProbs(this.model, batch, 'base');
    s.entropies.dispose();
    return s.logProbs;
  }
}
