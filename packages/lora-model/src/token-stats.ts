import * as tf from '@tensorflow/tfjs-core';
import { splitByOffsets, teacherBatch } from './batch.js';
import type { AdapterOption, CausalLM } from './causal-lm.js';
import { logProbStats } from './log-prob-stats.js';

/** Options of {@link tokenStats}. */
export interface TokenStatsOptions extends AdapterOption {
  /** Training pass (enables LoRA dropout). Default false. */
  training?: boolean;
}

/**
 * Per-action-token statistics, flat over the batch: sample i owns entries
 * offsets[i] .. offsets[i+1].
 */
export interface TokenStats {
  /** log π(w_k | prompt, w_<k) over the full vocabulary at temperature 1. */
  logProbs: tf.Tensor1D;
  /** Entropy of the full-vocabulary next-token distribution before each action token. */
  entropies: tf.Tensor1D;
  offsets: number[];
}

/**
 * Teacher-forced per-token log-probs and entropies of `actions[i]` following `prompts[i]`
 * (right-padded batch, causal attention). Differentiable w.r.t. the trainable variables: call it
 * inside `tf.variableGrads` / `optimizer.minimize` / `tf.tidy`; the caller owns the tensors.
 */
export function tokenStats(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
  opts: TokenStatsOptions = {},
): TokenStats {
  const tb = teacherBatch(prompts, actions, model.config.vocabSize);
  const [logProbs, entropies] = tf.tidy(() => {
    if (tb.rows.length === 0) return [tf.zeros([0]), tf.zeros([0])] as tf.Tensor1D[];
    const { hidden } = model.forward({
      ids: tb.ids,
      batch: tb.batch,
      seq: tb.seq,
      adapter: model.useAdapter(opts),
      training: opts.training === true,
    });
    const h = tf.gather(hidden, tf.tensor1d(tb.rows, 'int32')) as tf.Tensor2D;
    const st = logProbStats(model.head(h), tb.targets);
    return [st.logProbs, st.entropies];
  }) as [tf.Tensor1D, tf.Tensor1D];
  return { logProbs, entropies, offsets: tb.offsets };
}

/** {@link tokenStats} read back as numbers (no gradient): per sample, per action token. */
export async function scoreTokens(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
  opts: AdapterOption = {},
): Promise<{ logProbs: number[][]; entropies: number[][] }> {
  const s = tokenStats(model, prompts, actions, opts);
  try {
    const [lp, ent] = await Promise.all([s.logProbs.data(), s.entropies.data()]);
    return { logProbs: splitByOffsets(lp, s.offsets), entropies: splitByOffsets(ent, s.offsets) };
  } finally {
    s.logProbs.dispose();
    s.entropies.dispose();
  }
}
