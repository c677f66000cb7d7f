import * as tf from '@tensorflow/tfjs-core';

/** Additive mask value for keys a query must not see (finite, so fully masked rows stay finite). */
export const MASKED = -1e9;

/**
 * Positions and the additive attention mask for a step that appends `seq` tokens per row to a
 * cache holding `pastLen` slots per row, of which the first `pastValid[b]` are real (right
 * padding). Query `i` of row `b` sits at position `pastValid[b] + i` and sees past keys
 * `< pastValid[b]` and new keys `<= i`.
 *
 * Returns positions [batch·seq] and a mask of shape [batch, 1, 1, seq, pastLen + seq].
 */
export function stepMask(
  batch: number,
  seq: number,
  pastLen: number,
  pastValid: ArrayLike<number> | null,
): { positions: Int32Array; mask: tf.Tensor } {
  const keys = pastLen + seq;
  const positions = new Int32Array(batch * seq);
  const mask = new Float32Array(batch * seq * keys);
  for (let b = 0; b < batch; b++) {
    const valid = pastValid ? (pastValid[b] as number) : pastLen;
    for (let i = 0; i < seq; i++) {
      positions[b * seq + i] = valid + i;
      const row = (b * seq + i) * keys;
      for (let j = valid; j < pastLen; j++) mask[row + j] = MASKED;
      for (let j = i + 1; j < seq; j++) mask[row + pastLen + j] = MASKED;
    }
  }
  return { positions, mask: tf.tensor(mask, [batch, 1, 1, seq, keys]) };
}
