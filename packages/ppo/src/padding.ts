import * as tf from '@tensorflow/tfjs-core';
import { PolicyContractError } from './errors.js';
import type { TokenBatch } from './policy.js';

/**
 * Where each padded slot of a `[b, width]` matrix takes its entry from in the flat rows
 * (`Σ actions[i].length` entries, then one zero appended at index `total`), and where each flat
 * entry went in the padded matrix: both mappings are gathers.
 */
function paddingIndex(
  batch: TokenBatch,
  total: number,
): { toPadded: Int32Array; toFlat: Int32Array } {
  const w = batch.width;
  const toPadded = new Int32Array(batch.actions.length * w).fill(total);
  const toFlat = new Int32Array(total);
  let offset = 0;
  batch.actions.forEach((a, i) => {
    for (let k = 0; k < a.length; k++) {
      toPadded[i * w + k] = offset + k;
      toFlat[offset + k] = i * w + k;
    }
    offset += a.length;
  });
  return { toPadded, toFlat };
}

/**
 * A per-token policy output as a padded `[B, width]` matrix. Policies may return either that
 * matrix or the rows concatenated without padding, a flat `[Σ_i actions[i].length]` vector
 * (row i's entries first, in token order); the flat form is padded here with zeros.
 *
 * The padding is one gather (after appending the zero), and its gradient is the inverse gather,
 * so that padding a batch takes the same few GPU programs whatever its number of rows. Both
 * only copy entries: values and gradients are those of slicing each row and concatenating zeros.
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
  const index = paddingIndex(batch, total);
  const pad = tf.customGrad((...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = inputs[0] as tf.Tensor1D;
    const value = tf.tidy(() =>
      tf.reshape(tf.gather(tf.pad(x, [[0, 1]]), tf.tensor1d(index.toPadded, 'int32')), [
        b,
        batch.width,
      ]),
    );
    return {
      value,
      gradFunc: (dy: tf.Tensor) =>
        tf.gather(tf.reshape(dy, [-1]), tf.tensor1d(index.toFlat, 'int32')),
    };
  });
  return pad(t) as tf.Tensor2D;
}
