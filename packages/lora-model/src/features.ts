import * as tf from '@tensorflow/tfjs-core';
import { checkIds, splitByOffsets, teacherBatch } from './batch.js';
import type { CausalLM } from './causal-lm.js';
import type { ModelConfig } from './config.js';
import type { DecoderInput } from './decoder.js';
import { ModelInputError } from './errors.js';
import { rmsNorm } from './layers.js';

/**
 * Which hidden states a value head reads: `last`, the final hidden state (after the model's final
 * norm), or `layers`, every decoder layer's output through the final norm (as the logit lens reads
 * them), concatenated first layer first: `numLayers × hidden` numbers per row, whose last block is
 * the `last` features.
 */
export type ValueFeatures = 'last' | 'layers';

/** The width of a row of `features` for a model of `config`. */
export function featureSize(config: ModelConfig, features: ValueFeatures): number {
  return features === 'layers' ? config.numLayers * config.hiddenSize : config.hiddenSize;
}

/**
 * One decoder pass with `input` and the value-head features ({@link ValueFeatures}) of its rows
 * `rows` (indices into batch·seq), `[rows.length, featureSize]`. Differentiable w.r.t. whatever
 * the pass is (e.g. the adapter in `input`); call inside `tf.tidy` or a gradient function.
 */
export function featureRows(
  model: CausalLM,
  input: DecoderInput,
  rows: ArrayLike<number>,
  features: ValueFeatures,
): tf.Tensor2D {
  const out = model.forward(features === 'layers' ? { ...input, allLayers: true } : input);
  const idx = tf.tensor1d(Int32Array.from(rows), 'int32');
  const last = tf.gather(out.hidden, idx) as tf.Tensor2D;
  if (features === 'last') return last;
  const { finalNorm } = model.weights;
  const earlier = (out.layers ?? [])
    .slice(0, -1)
    .map((h) => rmsNorm(tf.gather(h, idx) as tf.Tensor2D, finalNorm, model.config.rmsNormEps));
  return tf.concat([...earlier, last], 1);
}

/** The features the model's value head reads (`last` without a head). */
function headFeatures(model: CausalLM): ValueFeatures {
  return model.valueHead?.features ?? 'last';
}

/**
 * Features of the frozen base model (adapter off), one row per action token: row k of sample i is
 * the state that precedes action token k, so V(o, w_<k) = head(row). Rows are flat [n, dim];
 * sample i owns rows offsets[i] .. offsets[i+1]. Because the base never changes, compute these
 * once per rollout and reuse them across PPO epochs.
 */
export interface BaseFeatures {
  data: Float32Array;
  dim: number;
  offsets: number[];
}

/**
 * Base features before every action token (see {@link BaseFeatures}), of the kind the model's
 * value head reads unless `features` says (the final hidden state without a head).
 */
export async function baseFeatures(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
  features: ValueFeatures = headFeatures(model),
): Promise<BaseFeatures> {
  const tb = teacherBatch(prompts, actions, model.config.vocabSize);
  const dim = featureSize(model.config, features);
  if (tb.rows.length === 0) return { data: new Float32Array(0), dim, offsets: tb.offsets };
  const t = tf.tidy(() =>
    featureRows(model, { ids: tb.ids, batch: tb.batch, seq: tb.seq }, tb.rows, features),
  );
  const data = (await t.data()) as Float32Array;
  t.dispose();
  return { data, dim, offsets: tb.offsets };
}

/**
 * Base features at the last token of each prompt, [prompts, dim]: the input of the bootstrap
 * value V(o) of an observation (of the kind the value head reads unless `features` says).
 */
export async function promptFeatures(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  features: ValueFeatures = headFeatures(model),
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
    const batch = prompts.length;
    if (features === 'layers') {
      const rows = prompts.map((p, i) => i * seq + p.length - 1);
      return featureRows(model, { ids, batch, seq }, rows, features);
    }
    const outputRows = prompts.map((p) => p.length - 1);
    return model.forward({ ids, batch, seq, outputRows }).hidden;
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
  const features = headFeatures(model);
  const f = await promptFeatures(model, prompts, features);
  const v = valuesOf(model, { data: f, dim: featureSize(model.config, features), offsets: [] });
  const data = await v.data();
  v.dispose();
  return Array.from(data);
}
