import { logProbStats } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { splitByOffsets, teacherBatch } from './batch.js';
import type { AdapterOption, CausalLM } from './causal-lm.js';
import { ModelInputError } from './errors.js';

/** Options of {@link tokenStats}. */
export interface TokenStatsOptions extends AdapterOption {
  /** Training pass (enables LoRA dropout). Default false. */
  training?: boolean;
  /**
   * Restricts each next-token distribution to a set of ids and renormalises it there:
   * `allowed[i][k]` lists the ids that may stand at action token k of sample i, including
   * `actions[i][k]` itself. Log-probs and entropies are then those of the restricted softmax
   * (a position with one allowed id has log-prob 0 and entropy 0). Used for a policy whose
   * actions are a fixed set of labels (the label tree's continuations).
   */
  allowed?: readonly (readonly ArrayLike<number>[])[];
  /**
   * Action tokens whose logits are computed at once (the LM head and the statistics run over
   * chunks of this many rows). Default: as many as fit in {@link LOGIT_CHUNK_BYTES}.
   */
  chunkRows?: number;
}

/** Large negative logit for padding slots of a restricted row (finite: p·log p stays 0). */
const MASKED = -1e9;

/**
 * Flat indices into the `[N·V]` logits and an additive mask `[N, M]`: row r lists its target
 * first, then the other allowed ids; unused slots repeat the target with {@link MASKED}.
 */
function restriction(
  allowed: readonly (readonly ArrayLike<number>[])[],
  actions: readonly (readonly number[])[],
  vocab: number,
): { index: Int32Array; bias: Float32Array; width: number } {
  if (allowed.length !== actions.length) {
    throw new ModelInputError(
      'allowed',
      `expected one list per sample (${actions.length}), got ${allowed.length}`,
    );
  }
  const sets: number[][] = [];
  actions.forEach((a, i) => {
    const rowSets = allowed[i]!;
    if (rowSets.length !== a.length) {
      throw new ModelInputError(
        `allowed[${i}]`,
        `expected one id list per action token (${a.length}), got ${rowSets.length}`,
      );
    }
    a.forEach((target, k) => {
      const ids = Array.from(rowSets[k]!);
      if (!ids.includes(target)) {
        throw new ModelInputError(
          `allowed[${i}][${k}]`,
          `must include the action token ${target}; got [${ids.join(', ')}]`,
        );
      }
      const set = [target];
      for (const v of ids) {
        if (!Number.isInteger(v) || v < 0 || v >= vocab) {
          throw new ModelInputError(
            `allowed[${i}][${k}]`,
            `id ${v} is outside the vocabulary [0, ${vocab})`,
          );
        }
        if (!set.includes(v)) set.push(v);
      }
      sets.push(set);
    });
  });
  const width = Math.max(1, ...sets.map((s) => s.length));
  const index = new Int32Array(sets.length * width);
  const bias = new Float32Array(sets.length * width);
  sets.forEach((set, r) => {
    for (let j = 0; j < width; j++) {
      index[r * width + j] = r * vocab + (set[j] ?? set[0]!);
      if (j >= set.length) bias[r * width + j] = MASKED;
    }
  });
  return { index, bias, width };
}

/**
 * Largest logits block computed at once by {@link tokenStats}, in bytes: rows are processed in
 * chunks below it (the LM head and the log-prob statistics), whatever the batch.
 */
export const LOGIT_CHUNK_BYTES = 256 * 2 ** 20;

/**
 * Log-probs and entropies of `targets` under the rows' logits [n, vocab]: over the whole
 * vocabulary, or over each row's allowed ids when `restricted` is given (`first` is the chunk's
 * first row in the restriction's numbering).
 */
function restrictedStats(
  logits: tf.Tensor2D,
  targets: Int32Array,
  restricted: ReturnType<typeof restriction> | null,
  first: number,
  vocab: number,
): { logProbs: tf.Tensor1D; entropies: tf.Tensor1D } {
  if (restricted === null) return logProbStats(logits, targets);
  // The allowed ids' logits, target first, then the softmax over them only.
  const n = targets.length;
  const w = restricted.width;
  const index = restricted.index
    .subarray(first * w, (first + n) * w)
    .map((flat) => flat - first * vocab);
  const picked = tf.gather(tf.reshape(logits, [-1]), tf.tensor1d(index, 'int32'));
  const z = tf.add(
    tf.reshape(picked, [n, w]),
    tf.tensor2d(restricted.bias.subarray(first * w, (first + n) * w), [n, w]),
  ) as tf.Tensor2D;
  return logProbStats(z, new Int32Array(n));
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
  const vocab = model.config.vocabSize;
  const per = opts.chunkRows ?? Math.max(1, Math.floor(LOGIT_CHUNK_BYTES / (4 * vocab)));
  if (!Number.isInteger(per) || per < 1) {
    throw new ModelInputError('chunkRows', `must be a positive integer, got ${per}`);
  }
  const restricted =
    opts.allowed === undefined ? null : restriction(opts.allowed, actions, model.config.vocabSize);
  const [logProbs, entropies] = tf.tidy(() => {
    if (tb.rows.length === 0) return [tf.zeros([0]), tf.zeros([0])] as tf.Tensor1D[];
    const { hidden } = model.forward({
      ids: tb.ids,
      batch: tb.batch,
      seq: tb.seq,
      adapter: model.useAdapter(opts),
      training: opts.training === true,
    });
    // Rows in chunks, so that no logits buffer exceeds LOGIT_CHUNK_BYTES (a GPU binds at most
    // maxStorageBufferBindingSize bytes per buffer; [4096 rows, 128k vocab] is 2 GB).
    const lps: tf.Tensor1D[] = [];
    const ents: tf.Tensor1D[] = [];
    for (let start = 0; start < tb.rows.length; start += per) {
      const end = Math.min(tb.rows.length, start + per);
      const h = tf.gather(hidden, tf.tensor1d(tb.rows.slice(start, end), 'int32')) as tf.Tensor2D;
      const targets = tb.targets.subarray(start, end);
      const st = restrictedStats(model.head(h), targets, restricted, start, vocab);
      lps.push(st.logProbs);
      ents.push(st.entropies);
    }
    return lps.length === 1 ? [lps[0]!, ents[0]!] : [tf.concat(lps), tf.concat(ents)];
  }) as [tf.Tensor1D, tf.Tensor1D];
  return { logProbs, entropies, offsets: tb.offsets };
}

/** {@link tokenStats} read back as numbers (no gradient): per sample, per action token. */
export async function scoreTokens(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
  opts: AdapterOption & Pick<TokenStatsOptions, 'allowed'> = {},
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
