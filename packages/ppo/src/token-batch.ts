import { allowedTokenSets } from './label-tokens.js';
import type { TokenBatch } from './policy.js';
import type { RolloutBuffer } from './rollout-buffer.js';

/**
 * The {@link TokenBatch} of the samples `rows` of a buffer: their prompts and actions, the longest
 * action's token count as the width (at least 1), and with `labels` (`tokenSpace: 'labels'`) the
 * label tree's token sets at each position.
 */
export function tokenBatchOf(
  buffer: RolloutBuffer,
  rows: ArrayLike<number>,
  labels: boolean,
): TokenBatch {
  let width = 1;
  for (let j = 0; j < rows.length; j++) width = Math.max(width, buffer.actionLength(rows[j]!));
  return {
    prompts: Array.from(rows, (i) => buffer.prompt(i)),
    actions: Array.from(rows, (i) => buffer.action(i)),
    width,
    ...(labels ? { allowed: allowedTokenSets(buffer, rows) } : {}),
  };
}

/**
 * Per-token arrays of a buffer (indexed like its tokens) for the samples `rows`, as row-major
 * `[rows.length, width]` matrices with zeros after each action's tokens, and the mask that is 1
 * at the real tokens and 0 at the padding.
 */
export function padTokenRows(
  buffer: RolloutBuffer,
  rows: ArrayLike<number>,
  width: number,
  perToken: readonly ArrayLike<number>[],
): { mask: Float32Array; mats: Float32Array[] } {
  const b = rows.length;
  const mask = new Float32Array(b * width);
  const mats = perToken.map(() => new Float32Array(b * width));
  for (let j = 0; j < b; j++) {
    const i = rows[j]!;
    const o = buffer.actionOffsets[i]!;
    const len = buffer.actionLength(i);
    for (let k = 0; k < len; k++) {
      mask[j * width + k] = 1;
      perToken.forEach((src, s) => {
        mats[s]![j * width + k] = src[o + k]!;
      });
    }
  }
  return { mask, mats };
}
