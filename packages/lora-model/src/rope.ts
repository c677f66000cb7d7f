import type { Llama3RopeScaling } from '@poad/hf-files';
import { activeFusedOps } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { frozenMatMul } from './linear.js';

/**
 * Inverse frequencies theta^(-2i/h), i < h/2, of the rotary embedding, with Llama 3's rescaling
 * when `scaling` is given (Meta's Llama 3.1 reference): with wavelength λ = 2π / f,
 * λ_low = original_max / low_freq_factor and λ_high = original_max / high_freq_factor,
 *   λ > λ_low:  f / factor                       (long wavelengths: interpolated)
 *   λ < λ_high: f                                (short wavelengths: kept)
 *   otherwise:  (1 − s) · f / factor + s · f,     s = (original_max / λ − low) / (high − low).
 */
export function ropeInverseFrequencies(
  headDim: number,
  theta: number,
  scaling: Llama3RopeScaling | null = null,
): Float64Array {
  const half = headDim / 2;
  const invFreq = new Float64Array(half);
  for (let i = 0; i < half; i++) invFreq[i] = 1 / theta ** ((2 * i) / headDim);
  if (!scaling) return invFreq;
  const {
    factor,
    low_freq_factor: low,
    high_freq_factor: high,
    original_max_position_embeddings: original,
  } = scaling;
  const lowFreqWavelen = original / low;
  const highFreqWavelen = original / high;
  for (let i = 0; i < half; i++) {
    const f = invFreq[i] as number;
    const wavelen = (2 * Math.PI) / f;
    if (wavelen > lowFreqWavelen) {
      invFreq[i] = f / factor;
    } else if (wavelen >= highFreqWavelen) {
      const smooth = (original / wavelen - low) / (high - low);
      invFreq[i] = ((1 - smooth) * f) / factor + smooth * f;
    }
  }
  return invFreq;
}

/**
 * Rotary position tables for the given positions, in the rotate-half convention: for head size
 * `h` and frequency index `i < h/2`, angle = position · f_i with f_i from
 * {@link ropeInverseFrequencies} (theta^(-2i/h), rescaled under Llama 3 scaling), repeated for
 * both halves. Returns cos and a sign-folded sin ([-sin, +sin] halves) of shape [n, 1, h], or
 * [n, h/2] cos and sin for the fused rotary op when fused ops are installed.
 */
export function ropeTables(
  positions: Int32Array,
  headDim: number,
  theta: number,
  scaling: Llama3RopeScaling | null = null,
): RopeTables {
  const half = headDim / 2;
  const invFreq = ropeInverseFrequencies(headDim, theta, scaling);
  const n = positions.length;
  // One cos and one sin per (position, frequency): what the fused rotary op takes as is.
  const cosHalf = new Float32Array(n * half);
  const sinHalf = new Float32Array(n * half);
  for (let r = 0; r < n; r++) {
    const p = positions[r] as number;
    for (let i = 0; i < half; i++) {
      const a = Math.fround(p * Math.fround(invFreq[i] as number));
      cosHalf[r * half + i] = Math.cos(a);
      sinHalf[r * half + i] = Math.sin(a);
    }
  }
  if (activeFusedOps()) {
    return {
      fused: { cos: tf.tensor2d(cosHalf, [n, half]), sin: tf.tensor2d(sinHalf, [n, half]) },
    };
  }
  // The TF.js form repeats them for both halves, with the sign of rotate_half folded into sin.
  const cos = new Float32Array(n * headDim);
  const sin = new Float32Array(n * headDim);
  for (let r = 0; r < n; r++) {
    const base = r * headDim;
    for (let i = 0; i < half; i++) {
      const c = cosHalf[r * half + i] as number;
      const si = sinHalf[r * half + i] as number;
      cos[base + i] = c;
      cos[base + half + i] = c;
      sin[base + i] = -si;
      sin[base + half + i] = si;
    }
  }
  // Half-swap permutation: [x1, x2] · swap = [x2, x1]; it is its own transpose.
  const swap = new Float32Array(headDim * headDim);
  for (let i = 0; i < half; i++) {
    swap[(i + half) * headDim + i] = 1;
    swap[i * headDim + i + half] = 1;
  }
  return {
    cos: tf.tensor3d(cos, [n, 1, headDim]),
    sin: tf.tensor3d(sin, [n, 1, headDim]),
    swap: tf.tensor2d(swap, [headDim, headDim]),
  };
}

/**
 * Tables for {@link applyRope}: either the TF.js form (cos, sign-folded sin and the half swap) or,
 * when fused ops are installed, one cos and one sin per frequency for the fused rotary op.
 */
export type RopeTables =
  | {
      cos: tf.Tensor3D;
      sin: tf.Tensor3D;
      /** [headDim, headDim] permutation swapping the two halves. */
      swap: tf.Tensor2D;
      fused?: undefined;
    }
  | { fused: { cos: tf.Tensor2D; sin: tf.Tensor2D } };

/**
 * Apply rotary embeddings to `x` of shape [n, heads·headDim] (n rows matching the tables).
 * rotate_half(x) = [-x2, x1]; the sign is folded into `sin`, so this is x·cos + [x2, x1]·sin.
 */
export function applyRope(
  x: tf.Tensor2D,
  heads: number,
  headDim: number,
  t: RopeTables,
): tf.Tensor2D {
  if (t.fused) {
    const ops = activeFusedOps();
    if (!ops)
      throw new Error('applyRope: tables were built for fused ops that are no longer active');
    return ops.rotaryEmbedding(x, t.fused.cos, t.fused.sin, heads);
  }
  const n = x.shape[0];
  // The half swap is a 2-D matmul by a permutation: one fast kernel instead of split + concat.
  const swapped = tf.reshape(frozenMatMul(tf.reshape(x, [n * heads, headDim]), t.swap, t.swap), [
    n,
    heads,
    headDim,
  ]);
  const x3 = tf.reshape(x, [n, heads, headDim]);
  const out = tf.add(tf.mul(x3, t.cos), tf.mul(swapped, t.sin));
  return tf.reshape(out, [n, heads * headDim]);
}
