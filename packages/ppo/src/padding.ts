import * as tf from '@tensorflow/tfjs-core';
import { PolicyContractError } from './errors.js';
import type { TokenBatch } from './policy.js';

/**
 * A per-token policy output as a padded `[B, width]` matrix. Policies may return either that
 * matrix or the rows concatenated without padding, a flat `[Σ_i actions[i].length]` vector
 * (row i's entries first, in token order); the flat form is padded here with zeros using only
 * Slice, Concat and Pack, whose gradients every TF.js setup registers.
 *
 * @throws PolicyContractError when the shape is neither.
 */
export function toPadded(t: tf.Tensor, batch: TokenBatch, method: string): tf.Tensor2D {
  const b = batch.actions.length;
  if (t.rank === 2 && t.shape[0] === b && t.shape[1] === batch.width) return t as tf.Tensor2D;
  let total = 0;
  for (const a of batch.actions) total += a.length;
  if (t.rank !== 1 || t.shape[0] !== total) {
    throw new PolicyContractError(
      method,
      `expected shape [${b}, ${batch.width}] (padded) or [${total}] (flat rows), got [${t.shape}].`,
    );
  }
  return tf.tidy(() => {
    const rows: tf.Tensor[] = [];
    let offset = 0;
    for (const a of batch.actions) {
      const row = tf.slice(t, [offset], [a.length]);
      offset += a.length;
      rows.push(
        a.length < batch.width ? tf.concat([row, tf.zeros([batch.width - a.length])]) : row,
      );
    }
    return tf.stack(rows) as tf.Tensor2D;
  });
}
