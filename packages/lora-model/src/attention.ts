import { batchMatMul } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config.js';

/**
 * Grouped-query attention. Queries of the heads sharing one kv head are stacked so keys and
 * values are never repeated: q is laid out [batch, kvHeads, group·seq, headDim].
 */
export function attention(
  c: ModelConfig,
  q: tf.Tensor2D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor,
  batch: number,
  seq: number,
): tf.Tensor2D {
  const g = c.numHeads / c.numKVHeads;
  const hd = c.headDim;
  const keys = k.shape[2];
  const q5 = tf.transpose(tf.reshape(q, [batch, seq, c.numKVHeads, g, hd]), [0, 2, 3, 1, 4]);
  const nb = batch * c.numKVHeads;
  const q3 = tf.reshape(tf.mul(q5, 1 / Math.sqrt(hd)), [nb, g * seq, hd]) as tf.Tensor3D;
  const k3 = tf.reshape(k, [nb, keys, hd]) as tf.Tensor3D;
  const v3 = tf.reshape(v, [nb, keys, hd]) as tf.Tensor3D;
  const scores = tf.reshape(batchMatMul(q3, k3, false, true), [batch, c.numKVHeads, g, seq, keys]);
  const probs = tf.softmax(tf.add(scores, mask));
  const ctx = batchMatMul(tf.reshape(probs, [nb, g * seq, keys]) as tf.Tensor3D, v3);
  const out = tf.transpose(tf.reshape(ctx, [batch, c.numKVHeads, g, seq, hd]), [0, 3, 1, 2, 4]);
  return tf.reshape(out, [batch * seq, c.numHeads * hd]);
}

/** Batched matmul over the two leading axes of 4-D tensors: [a, b, m, k] · [a, b, k|n, n|k]. */
function bmm4(x: tf.Tensor4D, y: tf.Tensor4D, transY: boolean): tf.Tensor4D {
  const [a, b, m] = x.shape;
  const x3 = tf.reshape(x, [a * b, m, x.shape[3]]) as tf.Tensor3D;
  const y3 = tf.reshape(y, [a * b, y.shape[2], y.shape[3]]) as tf.Tensor3D;
  const out = batchMatMul(x3, y3, false, transY);
  return tf.reshape(out, [a, b, m, out.shape[2]]) as tf.Tensor4D;
}

/**
 * Attention of rows that continue a shared prefix. Rows are grouped (perGroup rows per cached
 * prefix); each row's queries see the prefix keys of its group plus its own new keys. The
 * prefix part runs as one matmul per group with all the group's queries stacked, so the cache
 * is never repeated per row. Mathematically identical to attending over concat(prefix, own).
 */
export function sharedPrefixAttention(
  c: ModelConfig,
  q: tf.Tensor2D,
  kOwn: tf.Tensor4D,
  vOwn: tf.Tensor4D,
  kPre: tf.Tensor4D,
  vPre: tf.Tensor4D,
  mask: tf.Tensor,
  rows: number,
  seq: number,
): tf.Tensor2D {
  const g = c.numHeads / c.numKVHeads;
  const hd = c.headDim;
  const nKV = c.numKVHeads;
  const groups = kPre.shape[0];
  const per = rows / groups;
  const pre = kPre.shape[2];
  const gs = g * seq;
  // q → [rows, nKV, g·seq, hd] (same layout as plain attention).
  const q5 = tf.transpose(tf.reshape(q, [rows, seq, nKV, g, hd]), [0, 2, 3, 1, 4]);
  const qr = tf.reshape(tf.mul(q5, 1 / Math.sqrt(hd)), [rows, nKV, gs, hd]);
  // Stack every row of a group: [groups, nKV, per·g·seq, hd].
  const qg = tf.reshape(tf.transpose(tf.reshape(qr, [groups, per, nKV, gs, hd]), [0, 2, 1, 3, 4]), [
    groups,
    nKV,
    per * gs,
    hd,
  ]) as tf.Tensor4D;
  const sPre = tf.reshape(
    tf.transpose(tf.reshape(bmm4(qg, kPre, true), [groups, nKV, per, gs, pre]), [0, 2, 1, 3, 4]),
    [rows, nKV, gs, pre],
  );
  const sOwn = bmm4(qr as tf.Tensor4D, kOwn, true);
  const keys = pre + seq;
  const scores = tf.reshape(tf.concat([sPre, sOwn], 3), [rows, nKV, g, seq, keys]);
  const probs = tf.reshape(tf.softmax(tf.add(scores, mask)), [rows, nKV, gs, keys]);
  const [pPre, pOwn] = tf.split(probs, [pre, seq], 3) as [tf.Tensor4D, tf.Tensor4D];
  const pg = tf.reshape(
    tf.transpose(tf.reshape(pPre, [groups, per, nKV, gs, pre]), [0, 2, 1, 3, 4]),
    [groups, nKV, per * gs, pre],
  );
  const ctxPre = tf.reshape(
    tf.transpose(
      tf.reshape(bmm4(pg as tf.Tensor4D, vPre, false), [groups, nKV, per, gs, hd]),
      [0, 2, 1, 3, 4],
    ),
    [rows, nKV, gs, hd],
  );
  const ctx = tf.add(ctxPre, bmm4(pOwn, vOwn, false));
  const out = tf.transpose(tf.reshape(ctx, [rows, nKV, g, seq, hd]), [0, 3, 1, 2, 4]);
  return tf.reshape(out, [rows * seq, c.numHeads * hd]);
}
