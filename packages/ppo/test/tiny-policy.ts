import * as tf from '@tensorflow/tfjs-core';
import type { TokenBatch, TokenPolicy, TokenScores } from '../src/index.js';

/** Options of {@link TinyPolicy}. */
export interface TinyPolicyOptions {
  /** Words of the vocabulary; id = index + 1 (id 0 is padding). */
  words: readonly string[];
  /** Embedding width. */
  dim?: number;
  /** Hidden width of the actor and critic MLPs. */
  hidden?: number;
  /** Seed of the random initialisation. */
  seed: number;
}

/**
 * A tiny causal language model over word ids, for tests. The actor's feature at position p is
 * [embedding(x_p), mean of the embeddings of x_0..x_p], followed by an MLP to next-token logits.
 * The critic is a value-head MLP on features of a frozen random embedding (the "frozen base"):
 * [embedding(x_p), sum of the embeddings of x_0..x_p] (a sum, so that an early key word is not
 * diluted in long actions). Implements TokenPolicy structurally.
 */
export class TinyPolicy implements TokenPolicy {
  readonly vocab: number;
  readonly actorVariables: tf.Variable[];
  readonly criticVariables: tf.Variable[];
  private readonly ids = new Map<string, number>();
  private readonly emb: tf.Variable;
  private readonly w1: tf.Variable;
  private readonly b1: tf.Variable;
  private readonly w2: tf.Variable;
  private readonly frozenEmb: tf.Tensor2D;
  private readonly v1: tf.Variable;
  private readonly v2: tf.Variable;

  constructor(options: TinyPolicyOptions) {
    for (const [i, w] of options.words.entries()) this.ids.set(w, i + 1);
    this.vocab = options.words.length + 1;
    const d = options.dim ?? 8;
    const h = options.hidden ?? 16;
    let s = options.seed * 1000;
    const init = (shape: number[], scale: number) => {
      s += 1;
      return tf.randomNormal(shape, 0, scale, 'float32', s);
    };
    this.emb = tf.variable(init([this.vocab, d], 1), true);
    this.w1 = tf.variable(init([2 * d, h], 1 / Math.sqrt(2 * d)), true);
    this.b1 = tf.variable(tf.zeros([h]), true);
    this.w2 = tf.variable(init([h, this.vocab], 1 / Math.sqrt(h)), true);
    this.frozenEmb = init([this.vocab, d], 1) as tf.Tensor2D;
    this.v1 = tf.variable(init([2 * d, h], 1 / Math.sqrt(2 * d)), true);
    this.v2 = tf.variable(init([h, 1], 1 / Math.sqrt(h)), true);
    this.actorVariables = [this.emb, this.w1, this.b1, this.w2];
    this.criticVariables = [this.v1, this.v2];
  }

  /** Word ids of a text (unknown words throw). */
  encode(text: string): Int32Array {
    const words = text.trim().split(/\s+/);
    return Int32Array.from(words, (w) => {
      const id = this.ids.get(w);
      if (id === undefined) throw new Error(`unknown word '${w}'`);
      return id;
    });
  }

  encodePrompt(observation: string): Int32Array {
    return this.encode(observation);
  }

  encodeContinuations(_observation: string, candidates: readonly string[]): Int32Array[] {
    return candidates.map((c) => this.encode(c));
  }

  /**
   * Features `[B, L, 2d]` at the positions that predict action tokens 0..L−1 (the last prompt
   * position, then the action positions), with prompts left-padded so they end together.
   */
  private features(batch: TokenBatch, emb: tf.Tensor, pooling: 'mean' | 'sum'): tf.Tensor3D {
    const b = batch.prompts.length;
    const pMax = Math.max(...batch.prompts.map((p) => p.length));
    const s = pMax + batch.width;
    const ids = new Int32Array(b * s);
    const mask = new Float32Array(b * s);
    batch.prompts.forEach((p, i) => {
      const off = pMax - p.length;
      for (let j = 0; j < p.length; j++) {
        ids[i * s + off + j] = p[j]!;
        mask[i * s + off + j] = 1;
      }
      const a = batch.actions[i]!;
      for (let k = 0; k < a.length; k++) {
        ids[i * s + pMax + k] = a[k]!;
        mask[i * s + pMax + k] = 1;
      }
    });
    // One-hot × embedding instead of gather: the gather gradient is slow on the CPU backend.
    const e = tf.reshape(tf.matMul(tf.oneHot(tf.tensor1d(ids, 'int32'), this.vocab), emb), [
      b,
      s,
      -1,
    ]);
    const m = tf.tensor3d(mask, [b, s, 1]);
    // Prefix sums along the sequence as a product with a lower-triangular matrix (TF.js's
    // cumsum gradient is wrong for a non-last axis of a 3-D tensor).
    const tri = tf.linalg.bandPart(tf.ones([s, s]), -1, 0);
    const prefix = (x: tf.Tensor3D) => {
      const [bb, ss, dd] = x.shape;
      const flat = tf.reshape(tf.transpose(x, [1, 0, 2]), [ss, bb * dd]);
      return tf.transpose(tf.reshape(tf.matMul(tri, flat), [ss, bb, dd]), [1, 0, 2]);
    };
    const cum = prefix(tf.mul(e, m) as tf.Tensor3D);
    const count = tf.maximum(prefix(m), 1);
    const f = tf.concat([e, pooling === 'mean' ? tf.div(cum, count) : cum], 2);
    return tf.slice(f, [0, pMax - 1, 0], [b, batch.width, -1]) as tf.Tensor3D;
  }

  private logits(batch: TokenBatch): tf.Tensor3D {
    const f = this.features(batch, this.emb, 'mean');
    const [b, l, fd] = f.shape;
    const hdn = tf.tanh(tf.add(tf.matMul(tf.reshape(f, [b * l, fd]), this.w1), this.b1));
    return tf.reshape(tf.matMul(hdn, this.w2), [b, l, this.vocab]);
  }

  scoreTokens(batch: TokenBatch): TokenScores {
    const b = batch.prompts.length;
    let logits = this.logits(batch);
    if (batch.allowed) {
      // Restricted token space: −1e9 on every id outside allowed[i][k] (finite, so p·log p = 0).
      const bias = new Float32Array(b * batch.width * this.vocab);
      batch.allowed.forEach((row, i) => {
        for (let k = 0; k < batch.width; k++) {
          const ids = row[k];
          if (ids === undefined) continue;
          const o = (i * batch.width + k) * this.vocab;
          bias.fill(-1e9, o, o + this.vocab);
          for (const v of ids) bias[o + v] = 0;
        }
      });
      logits = tf.add(logits, tf.tensor3d(bias, [b, batch.width, this.vocab]));
    }
    const logp = tf.logSoftmax(logits);
    const target = new Int32Array(b * batch.width);
    for (const [i, a] of batch.actions.entries()) target.set(a, i * batch.width);
    const hot = tf.oneHot(tf.tensor2d(target, [b, batch.width], 'int32'), this.vocab);
    const logProbs = tf.sum(tf.mul(logp, hot), 2) as tf.Tensor2D;
    const entropies = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 2)) as tf.Tensor2D;
    return { logProbs, entropies };
  }

  tokenValues(batch: TokenBatch): tf.Tensor2D {
    const f = this.features(batch, this.frozenEmb, 'sum');
    const [b, l, fd] = f.shape;
    const hdn = tf.relu(tf.matMul(tf.reshape(f, [b * l, fd]), this.v1));
    return tf.reshape(tf.matMul(hdn, this.v2), [b, l]) as tf.Tensor2D;
  }

  promptValues(prompts: readonly Int32Array[]): tf.Tensor1D {
    const actions = prompts.map(() => new Int32Array([0]));
    const v = this.tokenValues({ prompts, actions, width: 1 });
    return tf.reshape(v, [prompts.length]) as tf.Tensor1D;
  }

  dispose(): void {
    for (const v of [...this.actorVariables, ...this.criticVariables]) v.dispose();
    this.frozenEmb.dispose();
  }
}
