import * as tf from '@tensorflow/tfjs-core';
import { checkIds, splitByOffsets, teacherBatch } from './batch.js';
import type { CausalLM } from './causal-lm.js';
import { ModelInputError } from './errors.js';

/**
 * Final hidden states of the frozen base model (adapter off, after the final norm), one row per
 * action token: row k of sample i is the state that precedes action token k, so V(o, w_<k) =
 * head(row). Rows are flat [n, dim]; sample i owns rows offsets[i] .. offsets[i+1]. Because the
 * base never changes, compute these once per rollout and reuse them across PPO epochs.
 */
export interface BaseFeatures {
  data: Float32Array;
  dim: number;
  offsets: number[];
}

function gatherHidden(
  model: CausalLM,
  ids: Int32Array,
  batch: number,
  seq: number,
  rows: Int32Array,
): tf.Tensor2D {
  return tf.tidy(() => {
    const { hidden } = model.forward({ ids, batch, seq });
    return tf.gather(hidden, tf.tensor1d(rows, 'int32')) as tf.Tensor2D;
  });
}

/** Base features before every action token (see {@link BaseFeatures}). */
export async function baseFeatures(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
): Promise<BaseFeatures> {
  const tb = teacherBatch(prompts, actions, model.config.vocabSize);
  const dim = model.config.hiddenSize;
  if (tb.rows.length === 0) return { data: new Float32Array(0), dim, offsets: tb.offsets };
  const t = gatherHidden(model, tb.ids, tb.batch, tb.seq, tb.rows);
  const data = (await t.data()) as Float32Array;
  t.dispose();
  return { data, dim, offsets: tb.offsets };
}

/**
 * Base features at the last token of each prompt, [prompts, dim]: the input of the bootstrap
 * value V(o) of an observation.
 */
export async function promptFeatures(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
): Promise<Float32Array> {
  if (!Array.isArray(prompts) || prompts.length === 0) {
    throw new ModelInputError('prompts', 'expected a non-empty array of token id arrays');
  }
  for (let i = 0; i < prompts.length; i++) {
    checkIds(`prompts[${i}]`, prompts[i] as number[], model.config.vocabSize, false);
  }
  const seq = Math.max(...prompts.map((p) => p.length));
  const ids = new Int32Array(prompts.length * seq);
  for (let i = 0; i < prompts.length; i++) ids.set(prompts[i] as number[], i * seq);
  const t = tf.tidy(() => {
    const outputRows = prompts.map((p) => p.length - 1);
    return model.forward({ ids, batch: prompts.length, seq, outputRows }).hidden;
  });
  const data = (await t.data()) as Float32Array;
  t.dispose();
  return data;
}

function requireHead(model: CausalLM) {
  if (!model.valueHead) {
    throw new ModelInputError(
      'model.valueHead',
      'the model has no value head; call addValueHead() first',
    );
  }
  return model.valueHead;
}

/**
 * Values of feature rows [n, dim] → [n]; differentiable w.r.t. the value head only (call inside
 * a gradient function). Accepts a tensor or host features.
 */
export function valuesOf(model: CausalLM, features: tf.Tensor2D | BaseFeatures): tf.Tensor1D {
  const head = requireHead(model);
  if (features instanceof tf.Tensor) return head.apply(features);
  const n = features.data.length / features.dim;
  return tf.tidy(() => head.apply(tf.tensor2d(features.data, [n, features.dim])));
}

/** Per-token values V(o, w_<k) for each action token, as numbers. */
export async function tokenValues(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
): Promise<number[][]> {
  requireHead(model);
  const f = await baseFeatures(model, prompts, actions);
  if (f.data.length === 0) return splitByOffsets([], f.offsets);
  const v = valuesOf(model, f);
  const data = await v.data();
  v.dispose();
  return splitByOffsets(data, f.offsets);
}

/** Bootstrap values V(o) at the end of each prompt. */
export async function promptValues(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
): Promise<number[]> {
  requireHead(model);
  const f = await promptFeatures(model, prompts);
  const v = valuesOf(model, { data: f, dim: model.config.hiddenSize, offsets: [] });
  const data = await v.data();
  v.dispose();
  return Array.from(data);
}
