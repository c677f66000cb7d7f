import * as tf from '@tensorflow/tfjs-core';
import { FUSED_KERNELS } from '../kernels/fused-ops.js';
import { fusedKernelActive } from '../register.js';
import { fusedOp } from './fused-op.js';

/** Sizes of {@link attention}. */
export interface AttentionOptions {
  /** Number of sequences; q, k and v hold `batch · seq` rows, sequence by sequence. */
  batch: number;
  /** Query heads side by side in the columns of q (and of the output). */
  heads: number;
  /** Key/value heads in the columns of k and v; a divisor of `heads` (grouped-query attention). */
  kvHeads: number;
  /** Multiplier of the scores q·k; default `1 / sqrt(headDim)`. */
  scale?: number;
}

/** The tensors of {@link attention}, checked. */
interface Inputs {
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
  mask: tf.Tensor3D;
}

/** The checked options (the scale filled in) and the sequence length and head size. */
type Dims = Required<AttentionOptions> & { seq: number; hd: number };

/*
 * Same math as the kernels in TF.js ops. The query heads sharing a kv head are stacked along the
 * rows of one product: q [B, H, S, hd] is [B·KV, group·S, hd] since head h = kv·group + i, so
 * k and v need no repetition and autodiff sums their gradients over the group.
 */
function composite({ q, k, v, mask }: Inputs, d: Dims): tf.Tensor2D {
  return tf.tidy(() => {
    const { batch, seq, heads, kvHeads, hd } = d;
    const group = heads / kvHeads;
    const qs = tf.reshape(tf.transpose(tf.reshape(q, [batch, seq, heads, hd]), [0, 2, 1, 3]), [
      batch * kvHeads,
      group * seq,
      hd,
    ]);
    const split = (x: tf.Tensor2D) =>
      tf.reshape(tf.transpose(tf.reshape(x, [batch, seq, kvHeads, hd]), [0, 2, 1, 3]), [
        batch * kvHeads,
        seq,
        hd,
      ]);
    const scores = tf.mul(tf.matMul(qs, split(k), false, true), d.scale);
    const masked = tf.add(
      tf.reshape(scores, [batch, heads, seq, seq]),
      tf.reshape(mask, [batch, 1, seq, seq]),
    );
    const probs = tf.reshape(tf.softmax(masked), [batch * kvHeads, group * seq, seq]);
    const out = tf.reshape(tf.matMul(probs, split(v)), [batch, heads, seq, hd]);
    return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [batch * seq, heads * hd]);
  });
}

function native({ q, k, v, mask }: Inputs, d: Dims): tf.Tensor2D {
  const attrs = { batch: d.batch, heads: d.heads, kvHeads: d.kvHeads, scale: d.scale };
  const f = fusedOp(
    (qi, ki, vi) => {
      const [out, probs] = tf
        .engine()
        .runKernel(FUSED_KERNELS.attention, { q: qi!, k: ki!, v: vi!, mask }, attrs) as tf.Tensor[];
      return { value: out!, saved: [qi!, ki!, vi!, probs!] };
    },
    (dy, [qs, ks, vs, ps]) =>
      tf
        .engine()
        .runKernel(
          FUSED_KERNELS.attentionGrad,
          { q: qs!, k: ks!, v: vs!, probs: ps!, dy },
          attrs,
        ) as tf.Tensor[],
  );
  return f(q, k, v) as tf.Tensor2D;
}

function positiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`attention: ${name} must be a positive integer, got ${value}`);
  }
}

function checkShape(name: string, t: tf.Tensor, expected: number[], layout: string): void {
  if (t.rank !== expected.length || t.shape.some((s, i) => s !== expected[i])) {
    throw new RangeError(`attention: ${name} must be ${layout} = [${expected}], got [${t.shape}]`);
  }
}

/**
 * Multi-head scaled dot-product self-attention with an additive mask and grouped-query heads:
 * per sequence b, position t and query head h,
 * `out[b,t,h] = Σ_j softmax_j(scale · q[b,t,h]·k[b,j,g] + mask[b,t,j]) · v[b,j,g]` with kv head
 * `g = floor(h / (heads / kvHeads))`.
 *
 * `q` is [batch·seq, heads·hd] (row `b·seq + t`, head h in columns `h·hd .. h·hd + hd − 1`), `k`
 * and `v` are [batch·seq, kvHeads·hd] laid out the same way, `mask` is [batch, seq, seq]: 0 where
 * position t may attend to j, a large negative number (e.g. -1e9) where not, so causal and padding
 * masks both go there. The result has the layout of `q`. Differentiable in q, k and v (the mask
 * is a constant).
 *
 * With native kernels registered on the active wasm backend the forward is one native pass that
 * keeps the attention probabilities for a native backward; otherwise (or for non-float32 inputs)
 * the same math runs as TF.js ops on any backend. Throws a `RangeError` naming the input whose
 * shape does not fit.
 */
export function attention(
  q: tf.Tensor2D,
  k: tf.Tensor2D,
  v: tf.Tensor2D,
  mask: tf.Tensor3D,
  opts: AttentionOptions,
): tf.Tensor2D {
  const { batch, heads, kvHeads } = opts;
  positiveInt('batch', batch);
  positiveInt('heads', heads);
  positiveInt('kvHeads', kvHeads);
  if (heads % kvHeads !== 0) {
    throw new RangeError(
      `attention: heads (${heads}) must be a multiple of kvHeads (${kvHeads}); each kv head serves heads / kvHeads query heads`,
    );
  }
  const [rows = 0, width = 0] = q.shape;
  if (q.rank !== 2 || rows % batch !== 0 || width === 0 || width % heads !== 0) {
    throw new RangeError(
      `attention: q must be [batch·seq, heads·hd] with batch = ${batch}, heads = ${heads} and hd ≥ 1, got [${q.shape}]`,
    );
  }
  const seq = rows / batch;
  const hd = width / heads;
  const kvLayout = `[batch·seq, kvHeads·hd]`;
  checkShape('k', k, [rows, kvHeads * hd], kvLayout);
  checkShape('v', v, [rows, kvHeads * hd], kvLayout);
  checkShape('mask', mask, [batch, seq, seq], '[batch, seq, seq]');
  const scale = opts.scale ?? 1 / Math.sqrt(hd);
  if (!Number.isFinite(scale)) {
    throw new RangeError(`attention: scale must be a finite number, got ${scale}`);
  }
  const d: Dims = { batch, seq, heads, kvHeads, hd, scale };
  const useNative =
    rows > 0 &&
    [q, k, v, mask].every((t) => t.dtype === 'float32') &&
    fusedKernelActive(FUSED_KERNELS.attention);
  return (useNative ? native : composite)({ q, k, v, mask }, d);
}
