import type { TokenBatch, TokenPolicy } from '@poad/ppo';
import type { Tensor2D, Variable } from '@tensorflow/tfjs-core';
import type { Reference } from './reference.js';

/** Vocabulary-wide scores of every action token of a batch, one row per token (rows concatenated). */
export interface VocabularyScores {
  /** Actor logits at the position that predicts each token; differentiable w.r.t. `actorVariables`. */
  policyLogits: Tensor2D;
  /**
   * Online critic Q over the vocabulary there (its head's output times `criticScale`);
   * differentiable w.r.t. `criticVariables`.
   */
  q: Tensor2D;
  /** log π̄ there, or `'uniform'`. */
  reference: Reference;
}

/**
 * What the ETPO trainer needs from a model, on top of `@poad/ppo`'s `TokenPolicy` (whose
 * rollout collection it reuses unchanged):
 * - `tokenValues` / `promptValues` return **soft values under the target critic**,
 *   E_{w∼π}[Q̄(·, w)] − β·KL(π ‖ π̄) at each position (`softStats`), so that the rollout buffer
 *   records exactly what `softBad` backs up; with `tokenSpace: 'labels'` they receive the allowed
 *   ids (`batch.allowed`, `promptValues`' second argument) and pass them to `softStats`;
 * - `vocabularyScores` ignores `batch.allowed`: the trainer restricts its scores itself;
 * - `criticVariables` are the online critic's (e.g. a second LoRA adapter whose language-model
 *   head gives Q), `targetVariables` the target critic's, in the same order and shapes;
 * - Q, wherever the policy produces it (online and target critic: `criticQ`,
 *   `vocabularyScores(batch).q` and the soft values), is `criticScale` times the critic head's
 *   output; the trainer refuses a policy whose `criticScale` (absent: 1) is not its config's.
 */
export interface EtpoPolicy extends TokenPolicy {
  /** Full-vocabulary actor logits, online Q and reference at every action token of `batch`. */
  vocabularyScores(batch: TokenBatch): VocabularyScores;
  /** The online Q alone (`vocabularyScores(batch).q`), for the critic step. */
  criticQ(batch: TokenBatch): Tensor2D;
  /** The target critic's variables (Polyak averages of `criticVariables`). */
  readonly targetVariables: readonly Variable[];
  /** The factor from the critic head's output to Q (config `criticScale`); absent means 1. */
  readonly criticScale?: number;
}
