/**
 * The row layout every per-token quantity of a language-model policy shares: a sample is a prompt
 * and an action (token ids), and it has one row per action token, read at the position that
 * predicts that token (the state before it), or one row, the last prompt token, for an empty
 * action (a prompt's own value). The critic's features, ETPO's logits and the value head all
 * count rows this way.
 */
import { type CausalLM, featureRows, type LoraAdapter, type ValueFeatures } from '@poad/lora-model';
import type * as tf from '@tensorflow/tfjs-core';

/** The rows of a sample whose action is `action`: one per token, or one for an empty action. */
export function rowCount(action: ArrayLike<number>): number {
  return Math.max(1, action.length);
}

/** An empty action for each prompt: the samples whose one row is the prompt's last token. */
export function noActions(prompts: readonly Int32Array[]): Int32Array[] {
  const empty = new Int32Array(0);
  return prompts.map(() => empty);
}

/** Id arrays as the plain number lists `@poad/lora-model` takes. */
export function idLists(ids: readonly ArrayLike<number>[]): number[][] {
  return ids.map((x) => Array.from(x));
}

/**
 * Final hidden states with `adapter` (undefined: the frozen base) at the rows of each sample,
 * concatenated in sample order: `[Σ rowCount(action), hiddenSize]`; with `features` `layers`,
 * every layer's hidden states (`featureRows` of `@poad/lora-model`), `numLayers × hiddenSize`
 * wide.
 */
export function hiddenRows(
  model: CausalLM,
  prompts: readonly Int32Array[],
  actions: readonly Int32Array[],
  adapter: LoraAdapter | undefined,
  features: ValueFeatures = 'last',
): tf.Tensor2D {
  const seq = Math.max(...prompts.map((p, i) => p.length + actions[i]!.length));
  const ids = new Int32Array(prompts.length * seq);
  const rows: number[] = [];
  prompts.forEach((p, i) => {
    const a = actions[i]!;
    ids.set(p, i * seq);
    ids.set(a, i * seq + p.length);
    const n = rowCount(a);
    for (let k = 0; k < n; k++) rows.push(i * seq + p.length - 1 + k);
  });
  return featureRows(model, { ids, batch: prompts.length, seq, adapter }, rows, features);
}
