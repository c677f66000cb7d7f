import type { TokenBatch, TokenScores } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import type { EtpoPolicy, VocabularyScores } from '../src/index.js';
import { flatAllowed, softStats } from '../src/index.js';

/**
 * A tiny word-level language model with an ETPO critic, for tests. Every row is one token
 * position with its context (prompt + earlier action tokens). Actor: an MLP on
 * [embedding of the last context word, mean embedding of the context] to next-word logits.
 * Critic: an MLP on the same features of a frozen random embedding (sum instead of mean) to Q over
 * the vocabulary; the target critic is a copy. Reference π̄: uniform. Q is `criticScale` times
 * the critic MLP's output, online and target alike.
 */
export class TinyEtpoPolicy implements EtpoPolicy {
  readonly vocab: number;
  readonly actorVariables: tf.Variable[];
  readonly criticVariables: tf.Variable[];
  readonly targetVariables: tf.Variable[];
  private readonly ids = new Map<string, number>();
  private readonly frozen: tf.Tensor2D;

  constructor(
    words: readonly string[],
    seed: number,
    readonly beta: number,
    readonly criticScale = 1,
  ) {
    for (const [i, w] of words.entries()) this.ids.set(w, i + 1);
    this.vocab = words.length + 1;
    const d = 8;
    const h = 16;
    let s = seed * 1000;
    const init = (shape: number[], scale: number) =>
      tf.randomNormal(shape, 0, scale, 'float32', ++s);
    const v = (t: tf.Tensor) => tf.variable(t, true);
    this.actorVariables = [
      v(init([this.vocab, d], 1)),
      v(init([2 * d, h], 1 / Math.sqrt(2 * d))),
      v(tf.zeros([h])),
      v(init([h, this.vocab], 1 / Math.sqrt(h))),
    ];
    this.frozen = init([this.vocab, d], 1) as tf.Tensor2D;
    this.criticVariables = [
      v(init([2 * d, h], 1 / Math.sqrt(2 * d))),
      v(init([h, this.vocab], 0.1 / Math.sqrt(h))),
    ];
    this.targetVariables = this.criticVariables.map((x) => tf.variable(x.clone(), false));
  }

  encodePrompt(observation: string): Int32Array {
    return Int32Array.from(observation.trim().split(/\s+/), (w) => {
      const id = this.ids.get(w);
      if (id === undefined) throw new Error(`unknown word '${w}'`);
      return id;
    });
  }

  encodeContinuations(_observation: string, candidates: readonly string[]): Int32Array[] {
    return candidates.map((c) => this.encodePrompt(c));
  }

  /** One-hot of each row's last context word and its context's word counts: `[rows, vocab]` each. */
  private contexts(prompts: readonly Int32Array[], actions: readonly Int32Array[] | null) {
    const rows: number[][] = [];
    prompts.forEach((p, i) => {
      const a = actions?.[i];
      const n = a ? a.length : 1;
      for (let k = 0; k < n; k++) rows.push([...p, ...(a ? a.subarray(0, k) : [])]);
    });
    const last = new Float32Array(rows.length * this.vocab);
    const counts = new Float32Array(rows.length * this.vocab);
    rows.forEach((ctx, r) => {
      last[r * this.vocab + ctx.at(-1)!] = 1;
      for (const id of ctx) counts[r * this.vocab + id]! += 1;
    });
    const shape: [number, number] = [rows.length, this.vocab];
    return {
      last: tf.tensor2d(last, shape),
      counts: tf.tensor2d(counts, shape),
      lengths: rows.map((c) => c.length),
    };
  }

  private actorLogits(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[] | null,
  ): tf.Tensor2D {
    const [emb, w1, b1, w2] = this.actorVariables;
    const c = this.contexts(prompts, actions);
    const mean = tf.div(c.counts, tf.tensor2d(c.lengths, [c.lengths.length, 1]));
    const f = tf.concat([tf.matMul(c.last, emb!), tf.matMul(mean, emb!)], 1);
    return tf.matMul(tf.tanh(tf.add(tf.matMul(f, w1!), b1!)), w2!) as tf.Tensor2D;
  }

  private q(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[] | null,
    vars: readonly tf.Variable[],
  ): tf.Tensor2D {
    const c = this.contexts(prompts, actions);
    const f = tf.concat([tf.matMul(c.last, this.frozen), tf.matMul(c.counts, this.frozen)], 1);
    const out = tf.matMul(tf.relu(tf.matMul(f, vars[0]!)), vars[1]!) as tf.Tensor2D;
    return this.criticScale === 1 ? out : (tf.mul(out, this.criticScale) as tf.Tensor2D);
  }

  scoreTokens(batch: TokenBatch): TokenScores {
    const logp = tf.logSoftmax(this.actorLogits(batch.prompts, batch.actions));
    const chosen = batch.actions.flatMap((a) => Array.from(a));
    const hot = tf.oneHot(tf.tensor1d(chosen, 'int32'), this.vocab);
    return {
      logProbs: tf.sum(tf.mul(logp, hot), 1) as tf.Tensor1D,
      entropies: tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)) as tf.Tensor1D,
    };
  }

  private softValues(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[] | null,
    allowed: readonly Int32Array[] | undefined,
  ): tf.Tensor1D {
    const s = softStats(
      this.actorLogits(prompts, actions),
      this.q(prompts, actions, this.targetVariables),
      'uniform',
      this.beta,
      allowed,
    );
    return s.softValue;
  }

  tokenValues(batch: TokenBatch): tf.Tensor1D {
    return this.softValues(
      batch.prompts,
      batch.actions,
      batch.allowed ? flatAllowed(batch.allowed) : undefined,
    );
  }

  promptValues(prompts: readonly Int32Array[], allowed?: readonly Int32Array[]): tf.Tensor1D {
    return this.softValues(prompts, null, allowed);
  }

  vocabularyScores(batch: TokenBatch): VocabularyScores {
    return {
      policyLogits: this.actorLogits(batch.prompts, batch.actions),
      q: this.q(batch.prompts, batch.actions, this.criticVariables),
      reference: 'uniform',
    };
  }

  criticQ(batch: TokenBatch): tf.Tensor2D {
    return this.q(batch.prompts, batch.actions, this.criticVariables);
  }

  /** Online (or `vars`') Q over the vocabulary after `prompt` + `prefix`. */
  qAfter(
    prompt: Int32Array,
    prefix: Int32Array,
    vars: readonly tf.Variable[] = this.criticVariables,
  ): Float32Array {
    return tf
      .tidy(
        () => this.q([prompt], [Int32Array.from([...prefix, 0])], vars).dataSync() as Float32Array,
      )
      .slice(prefix.length * this.vocab, (prefix.length + 1) * this.vocab);
  }

  dispose(): void {
    tf.dispose([
      ...this.actorVariables,
      ...this.criticVariables,
      ...this.targetVariables,
      this.frozen,
    ]);
  }
}
