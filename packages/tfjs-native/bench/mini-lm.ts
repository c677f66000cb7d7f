// A small LLaMA-style decoder written with TF.js ops for the benchmark: RMSNorm, rotary
// embeddings (rotate-half), causal softmax attention, SwiGLU MLP, untied LM head, mean
// cross-entropy. RMSNorm, rotary embeddings, SwiGLU and the log-probabilities use this package's
// fused ops, which
// fall back to plain TF.js ops when the fused kernels are not registered. Base weights are constants; LoRA adapters (rank 8, alpha 16) on q and v are the
// only variables, trained with Adam.
import { mulberry32 } from '@poad/dev-kit';
import * as tf from '@tensorflow/tfjs-core';
import { logProbStats, rmsNorm, rotaryEmbedding, swiGlu } from '../src/index.js';

export interface MiniLmConfig {
  name: string;
  d: number;
  layers: number;
  heads: number;
  ffn: number;
  vocab: number;
  batch: number;
  seq: number;
}

export const SMALL: MiniLmConfig = {
  name: 'small (d=256, 4 layers, V=4096, B=8, T=128)',
  d: 256,
  layers: 4,
  heads: 4,
  ffn: 688,
  vocab: 4096,
  batch: 8,
  seq: 128,
};

export const QUICK: MiniLmConfig = {
  name: 'quick (d=128, 2 layers, V=2048, B=4, T=64)',
  d: 128,
  layers: 2,
  heads: 4,
  ffn: 344,
  vocab: 2048,
  batch: 4,
  seq: 64,
};

interface Layer {
  norm1: tf.Tensor1D;
  norm2: tf.Tensor1D;
  wq: tf.Tensor;
  wk: tf.Tensor;
  wv: tf.Tensor;
  wo: tf.Tensor;
  gate: tf.Tensor;
  up: tf.Tensor;
  down: tf.Tensor;
  qA: tf.Variable;
  qB: tf.Variable;
  vA: tf.Variable;
  vB: tf.Variable;
}

export interface MiniLm {
  config: MiniLmConfig;
  /** Mean cross-entropy of next-token prediction on the fixed batch. */
  loss(): tf.Scalar;
  /** One Adam step on the adapters; returns the loss. */
  step(): number;
  dispose(): void;
}

export function buildMiniLm(config: MiniLmConfig, seed = 1): MiniLm {
  const rand = mulberry32(seed);
  const { d, layers, heads, ffn, vocab, batch, seq } = config;
  const hd = d / heads;
  const rank = 8;
  const scaleLora = 16 / rank;
  const normal = (shape: number[], std: number) => {
    const size = shape.reduce((p, x) => p * x, 1);
    const v = new Float32Array(size);
    for (let i = 0; i < size; i++) {
      const u = Math.max(rand(), 1e-12);
      v[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand()) * std;
    }
    return tf.tensor(v, shape);
  };
  const variable = (shape: number[], std: number) => {
    const t = std === 0 ? tf.zeros(shape) : normal(shape, std);
    const v = tf.variable(t);
    t.dispose();
    return v;
  };
  const embed = normal([vocab, d], 0.02);
  const head = normal([d, vocab], 0.02);
  const finalNorm = tf.ones([d]) as tf.Tensor1D;
  const blocks: Layer[] = [];
  for (let l = 0; l < layers; l++) {
    blocks.push({
      norm1: tf.ones([d]) as tf.Tensor1D,
      norm2: tf.ones([d]) as tf.Tensor1D,
      wq: normal([d, d], 0.02),
      wk: normal([d, d], 0.02),
      wv: normal([d, d], 0.02),
      wo: normal([d, d], 0.02),
      gate: normal([d, ffn], 0.02),
      up: normal([d, ffn], 0.02),
      down: normal([ffn, d], 0.02),
      qA: variable([d, rank], 0.02),
      qB: variable([rank, d], 0),
      vA: variable([d, rank], 0.02),
      vB: variable([rank, d], 0),
    });
  }
  const tokens = Array.from({ length: batch * (seq + 1) }, () => Math.floor(rand() * vocab));
  const inputIds = tf.tensor2d(
    tokens.filter((_, i) => i % (seq + 1) !== seq),
    [batch, seq],
    'int32',
  );
  const targetIds = tf.tensor1d(
    tokens.filter((_, i) => i % (seq + 1) !== 0),
    'int32',
  ) as tf.Tensor1D;
  const mask = tf.tensor2d(
    Array.from({ length: seq * seq }, (_, i) => (i % seq <= Math.floor(i / seq) ? 0 : -1e9)),
    [seq, seq],
  );
  // Angles per row of the flattened [batch·seq, d] activations (row r is position r % seq).
  const half = hd / 2;
  const angles = Array.from({ length: batch * seq * half }, (_, i) => {
    const pos = Math.floor(i / half) % seq;
    const j = i % half;
    return pos / 10000 ** ((2 * j) / hd);
  });
  const cos = tf.tensor2d(angles.map(Math.cos), [batch * seq, half]);
  const sin = tf.tensor2d(angles.map(Math.sin), [batch * seq, half]);
  const rope = (x: tf.Tensor) => rotaryEmbedding(x as tf.Tensor2D, cos, sin, heads);
  const splitHeads = (x: tf.Tensor) =>
    tf.transpose(tf.reshape(x, [batch, seq, heads, hd]), [0, 2, 1, 3]);
  const lora = (x: tf.Tensor, w: tf.Tensor, a: tf.Tensor, b: tf.Tensor) =>
    tf.add(tf.matMul(x, w), tf.mul(tf.matMul(tf.matMul(x, a), b), scaleLora));

  const loss = () =>
    tf.tidy(() => {
      let h = tf.reshape(tf.gather(embed, inputIds), [batch * seq, d]);
      for (const blk of blocks) {
        const x = rmsNorm(h, blk.norm1, 1e-6);
        const q = splitHeads(rope(lora(x, blk.wq, blk.qA, blk.qB)));
        const k = splitHeads(rope(tf.matMul(x, blk.wk)));
        const v = splitHeads(lora(x, blk.wv, blk.vA, blk.vB));
        const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(hd)), mask);
        const ctx = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), v), [0, 2, 1, 3]), [
          batch * seq,
          d,
        ]);
        h = tf.add(h, tf.matMul(ctx, blk.wo));
        const y = rmsNorm(h, blk.norm2, 1e-6);
        const act = swiGlu(tf.matMul(y, blk.gate), tf.matMul(y, blk.up));
        h = tf.add(h, tf.matMul(act, blk.down));
      }
      const logits = tf.matMul(rmsNorm(h, finalNorm, 1e-6), head) as tf.Tensor2D;
      return tf.neg(tf.mean(logProbStats(logits, targetIds).logProbs)) as tf.Scalar;
    });

  const optimizer = tf.train.adam(1e-3);
  const trainable = blocks.flatMap((b) => [b.qA, b.qB, b.vA, b.vB]);
  return {
    config,
    loss,
    step() {
      const value = optimizer.minimize(loss, true, trainable);
      const out = value!.dataSync()[0]!;
      value!.dispose();
      return out;
    },
    dispose() {
      optimizer.dispose();
      tf.dispose([embed, head, finalNorm, inputIds, targetIds, mask, cos, sin]);
      for (const b of blocks) tf.dispose(Object.values(b));
    },
  };
}
