import { activeFusedOps, readTensors, targetLogProbs } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { checkIds } from './batch.js';
import type { AdapterOption, CausalLM } from './causal-lm.js';
import { ModelInputError } from './errors.js';
import { tidyNested } from './variable.js';

/** Options of {@link scoreContinuations}. */
export interface ScoreOptions extends AdapterOption {
  /**
   * Run each prompt once and share its KV cache with its candidates (default true). With false,
   * every prompt + candidate sequence is run in full (the reference the shared path must match).
   */
  prefixSharing?: boolean;
  /** Largest number of candidate rows per forward pass (memory bound). Default 64. */
  maxBatch?: number;
}

function validate(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  candidatesPerPrompt: readonly (readonly (readonly number[])[])[],
): void {
  const vocab = model.config.vocabSize;
  if (!Array.isArray(prompts) || prompts.length === 0) {
    throw new ModelInputError('prompts', 'expected a non-empty array of token id arrays');
  }
  if (!Array.isArray(candidatesPerPrompt) || candidatesPerPrompt.length !== prompts.length) {
    throw new ModelInputError(
      'candidatesPerPrompt',
      `expected one candidate list per prompt (${prompts.length})`,
    );
  }
  prompts.forEach((p, i) => {
    checkIds(`prompts[${i}]`, p as number[], vocab, false);
    const cands = candidatesPerPrompt[i];
    if (!Array.isArray(cands))
      throw new ModelInputError(`candidatesPerPrompt[${i}]`, 'expected an array');
    for (let j = 0; j < cands.length; j++) {
      checkIds(`candidatesPerPrompt[${i}][${j}]`, cands[j] as number[], vocab, false);
    }
  });
}

/** Per-token log-probs of each prompt's candidates (result[i][j][k]), one way of computing them. */
type Scorer = (
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  cands: readonly (readonly (readonly number[])[])[],
  opts: ScoreOptions,
) => Promise<number[][][]>;

/** log-softmax of logits rows at `rows`, gathered at `targets`: one number per target. */
function gatherLogProbs(
  model: CausalLM,
  hidden: tf.Tensor2D,
  rows: Int32Array,
  targets: Int32Array,
): tf.Tensor1D {
  const h = tf.gather(hidden, tf.tensor1d(rows, 'int32')) as tf.Tensor2D;
  return targetLogProbs(model.head(h), targets);
}

const scoreNaive: Scorer = async (model, prompts, cands, opts) => {
  const seqs: number[][] = [];
  const plen: number[] = [];
  prompts.forEach((p, i) => {
    for (const c of cands[i] ?? []) {
      seqs.push([...p, ...c]);
      plen.push(p.length);
    }
  });
  const flatScores: number[][] = [];
  const maxBatch = opts.maxBatch ?? 64;
  for (let s = 0; s < seqs.length; s += maxBatch) {
    const chunk = seqs.slice(s, s + maxBatch);
    const seq = Math.max(...chunk.map((x) => x.length - 1));
    const ids = new Int32Array(chunk.length * seq);
    const rows: number[] = [];
    const targets: number[] = [];
    const counts: number[] = [];
    chunk.forEach((x, b) => {
      ids.set(x.slice(0, x.length - 1), b * seq);
      const p = plen[s + b] as number;
      for (let k = p; k < x.length; k++) {
        rows.push(b * seq + k - 1);
        targets.push(x[k] as number);
      }
      counts.push(x.length - p);
    });
    const out = tf.tidy(() => {
      const { hidden } = model.forward({
        ids,
        batch: chunk.length,
        seq,
        adapter: model.useAdapter(opts),
      });
      return gatherLogProbs(model, hidden, Int32Array.from(rows), Int32Array.from(targets));
    });
    const vals = Array.from(await out.data());
    out.dispose();
    let o = 0;
    for (const n of counts) {
      flatScores.push(vals.slice(o, o + n));
      o += n;
    }
  }
  const result: number[][][] = [];
  let k = 0;
  for (const c of cands) result.push(c.map(() => flatScores[k++] as number[]));
  return result;
};

const scoreShared: Scorer = async (model, prompts, cands, opts) => {
  const adapter = model.useAdapter(opts);
  const nP = prompts.length;
  const pSeq = Math.max(...prompts.map((p) => p.length));
  const pIds = new Int32Array(nP * pSeq);
  for (let i = 0; i < nP; i++) pIds.set(prompts[i] as number[], i * pSeq);
  const pLens = Int32Array.from(prompts.map((p) => p.length));
  const result: number[][][] = cands.map((c) => c.map((x) => new Array<number>(x.length).fill(0)));

  // 1. Prompts once: cache, plus the log-probs of every candidate's first token.
  const firstRows: number[] = [];
  const firstTargets: number[] = [];
  const owner: Array<[number, number]> = [];
  cands.forEach((list, i) => {
    list.forEach((c, j) => {
      firstRows.push(i);
      firstTargets.push(c[0] as number);
      owner.push([i, j]);
    });
  });
  const { cache, first } = tidyNested(() => {
    const outputRows = Array.from(pLens, (l) => l - 1);
    const out = model.forward({
      ids: pIds,
      batch: nP,
      seq: pSeq,
      adapter,
      wantCache: true,
      outputRows,
    });
    const lp = gatherLogProbs(
      model,
      out.hidden,
      Int32Array.from(firstRows),
      Int32Array.from(firstTargets),
    );
    return { cache: out.cache ?? [], first: lp };
  });
  // Every log-prob tensor is read at the end, all at once (one host read on webgpu).
  const chunks: { lp: tf.Tensor; slots: Array<[number, number] | null> }[] = [];
  try {
    // 2. Candidates (all but their last token) against the shared cache. Rows are laid out
    //    prompt-major, `per` candidate slots per prompt (empty slots are padding).
    const maxC = Math.max(...cands.map((c) => c.length));
    const per = Math.max(1, Math.min(maxC, Math.floor((opts.maxBatch ?? 64) / nP) || 1));
    for (let j0 = 0; j0 < maxC; j0 += per) {
      const slots: Array<[number, number] | null> = [];
      let seq = 0;
      for (let i = 0; i < nP; i++) {
        for (let j = j0; j < j0 + per; j++) {
          const c = cands[i]?.[j];
          slots.push(c && c.length > 1 ? [i, j] : null);
          if (c) seq = Math.max(seq, c.length - 1);
        }
      }
      if (seq === 0) continue;
      const rowsN = nP * per;
      const ids = new Int32Array(rowsN * seq);
      const pastValid = new Int32Array(rowsN);
      const rows: number[] = [];
      const targets: number[] = [];
      slots.forEach((slot, r) => {
        pastValid[r] = pLens[Math.floor(r / per)] as number;
        if (!slot) return;
        const c = cands[slot[0]]?.[slot[1]] as number[];
        ids.set(c.slice(0, c.length - 1), r * seq);
        for (let k = 1; k < c.length; k++) {
          rows.push(r * seq + k - 1);
          targets.push(c[k] as number);
        }
      });
      if (rows.length === 0) continue;
      const lp = tf.tidy(() => {
        const { hidden } = model.forward({
          ids,
          batch: rowsN,
          seq,
          pastValid,
          sharedPast: { cache, perGroup: per },
          adapter,
          noGrad: true,
        });
        return gatherLogProbs(model, hidden, Int32Array.from(rows), Int32Array.from(targets));
      });
      chunks.push({ lp, slots });
    }
    const [fv, ...chunkValues] = await readTensors([first, ...chunks.map((c) => c.lp)]);
    owner.forEach(([i, j], n) => {
      (result[i]?.[j] as number[])[0] = fv![n] as number;
    });
    chunks.forEach(({ slots }, c) => {
      const vals = chunkValues[c]!;
      let o = 0;
      for (const slot of slots) {
        if (!slot) continue;
        const out = result[slot[0]]?.[slot[1]] as number[];
        for (let k = 1; k < out.length; k++) out[k] = vals[o++] as number;
      }
    });
  } finally {
    first.dispose();
    for (const c of chunks) c.lp.dispose();
    for (const e of cache) {
      e.k.dispose();
      e.v.dispose();
    }
  }
  return result;
};

/**
 * Prompts `chunk` of `prompts` and their candidates as packed rows (see
 * `DecoderInput.packed`): each prompt's tokens, then each of its candidates' tokens but the last;
 * `keys` gives every row the rows it attends to, `back` every row the rows that attend to it (the
 * inverse, for the gradient); `rows`/`targets` pick, in prompt, candidate, token order, the
 * hidden row that predicts each candidate token and the token.
 */
/** Packed rows of a prompt and its candidates: its tokens and each candidate's but the last. */
function packedRowCount(prompt: readonly number[], cands: readonly (readonly number[])[]): number {
  return prompt.length + cands.reduce((n, c) => n + c.length - 1, 0);
}

function packRows(
  prompts: readonly (readonly number[])[],
  cands: readonly (readonly (readonly number[])[])[],
  chunk: readonly number[],
) {
  const ids: number[] = [];
  const positions: number[] = [];
  const keys: number[] = [];
  const back: number[] = [];
  const rows: number[] = [];
  const targets: number[] = [];
  for (const i of chunk) {
    const p = prompts[i]!;
    const list = cands[i] ?? [];
    const start = ids.length;
    const end = start + packedRowCount(p, list);
    p.forEach((t, k) => {
      ids.push(t);
      positions.push(k);
      keys.push(start, start + k + 1, 0, 0);
      // Seen by the prompt's later rows and by every row of its candidates.
      back.push(start + k, start + p.length, start + p.length, end);
    });
    for (const c of list) {
      const own = ids.length;
      rows.push(start + p.length - 1);
      targets.push(c[0]!);
      for (let k = 0; k + 1 < c.length; k++) {
        ids.push(c[k]!);
        positions.push(p.length + k);
        keys.push(start, start + p.length, own, own + k + 1);
        back.push(own + k, own + c.length - 1, 0, 0);
        rows.push(own + k);
        targets.push(c[k + 1]!);
      }
    }
  }
  return { ids, positions, keys, back, rows, targets };
}

/**
 * The log-probs of the candidate tokens of packed rows (in {@link packRows}' order), from one
 * decoder pass over them; differentiable with `grad` (the inverse ranges go along), forward only
 * otherwise. Call inside `tf.tidy` or a gradient function.
 */
function packedLogProbs(
  model: CausalLM,
  packed: ReturnType<typeof packRows>,
  adapter: ReturnType<CausalLM['useAdapter']>,
  grad: { training: boolean } | null,
): tf.Tensor1D {
  const { hidden } = model.forward({
    ids: Int32Array.from(packed.ids),
    batch: 1,
    seq: packed.ids.length,
    adapter,
    ...(grad ? { training: grad.training } : { noGrad: true }),
    packed: {
      positions: packed.positions,
      keys: Int32Array.from(packed.keys),
      ...(grad ? { back: Int32Array.from(packed.back) } : {}),
    },
  });
  return gatherLogProbs(
    model,
    hidden,
    Int32Array.from(packed.rows),
    Int32Array.from(packed.targets),
  );
}

/** Most packed rows (prompt and candidate tokens) one pass of {@link scorePacked} runs. */
export const PACKED_SCORING_ROWS = 16_384;

/**
 * Prompts and their candidates packed into one pass without padding (webgpu's fused
 * `rangeAttention`): each prompt's rows attend causally to themselves; each candidate's rows
 * (all its tokens but the last) sit after their prompt's positions and attend to the prompt's
 * rows and their own up to themselves. So every prompt still runs once, but prompts and
 * candidates share one pass, and every log-prob comes from one gather of the hidden rows.
 * Prompts go in chunks of at most {@link PACKED_SCORING_ROWS} rows (a prompt with more runs
 * alone); all chunks are read back at once.
 */
const scorePacked: Scorer = async (model, prompts, cands, opts) => {
  const adapter = model.useAdapter(opts);
  const rowsOf = (i: number) => packedRowCount(prompts[i]!, cands[i] ?? []);
  const chunks: number[][] = [];
  let rowsIn = 0;
  prompts.forEach((_, i) => {
    const n = rowsOf(i);
    if (chunks.length === 0 || rowsIn + n > PACKED_SCORING_ROWS) {
      chunks.push([]);
      rowsIn = 0;
    }
    chunks.at(-1)!.push(i);
    rowsIn += n;
  });
  const outs: tf.Tensor[] = [];
  try {
    for (const chunk of chunks) {
      const packed = packRows(prompts, cands, chunk);
      outs.push(tf.tidy(() => packedLogProbs(model, packed, adapter, null)));
    }
    const values = await readTensors(outs);
    const result: number[][][] = cands.map(() => []);
    chunks.forEach((chunk, n) => {
      const vals = values[n]!;
      let o = 0;
      for (const i of chunk) {
        result[i] = (cands[i] ?? []).map((c) => {
          const from = o;
          o += c.length;
          return Array.from(vals.subarray(from, o));
        });
      }
    });
    return result;
  } finally {
    tf.dispose(outs);
  }
};

/**
 * Per-token log-probs of each candidate continuing its prompt: result[i][j][k] is
 * log p(candidate_j[k] | prompt_i, candidate_j[<k]). Each prompt is run once and its keys and
 * values are shared by its candidates; the numbers equal full-sequence scoring. On webgpu
 * prompts and candidates run packed in one pass (one fused attention program per layer over
 * ranges of rows); elsewhere the prompts run first and their KV cache serves the candidates.
 */
export async function scoreContinuations(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  candidatesPerPrompt: readonly (readonly (readonly number[])[])[],
  opts: ScoreOptions = {},
): Promise<number[][][]> {
  validate(model, prompts, candidatesPerPrompt);
  if (candidatesPerPrompt.every((c) => c.length === 0)) return candidatesPerPrompt.map(() => []);
  if (opts.prefixSharing === false) return scoreNaive(model, prompts, candidatesPerPrompt, opts);
  if (activeFusedOps()?.rangeAttention) {
    return scorePacked(model, prompts, candidatesPerPrompt, opts);
  }
  return scoreShared(model, prompts, candidatesPerPrompt, opts);
}

/**
 * The differentiable form of {@link scoreContinuations} for a training step: log-probs of every
 * candidate token continuing its prompt, as one flat tensor (prompt-major, then candidate, then
 * token), with gradients through the adapter. Each prompt runs once (its KV cache is shared by
 * its candidates, never copied per row); all candidates run in one more pass (on webgpu, prompts
 * and candidates run packed in one pass, attention forward and backward as fused programs).
 * Equals scoring each prompt + candidate sequence in full, to float tolerance. Synchronous: call it inside
 * `tf.variableGrads`/`tf.tidy`; the result belongs to the caller.
 */
export function candidateTokenLogProbs(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  candidatesPerPrompt: readonly (readonly (readonly number[])[])[],
  opts: AdapterOption & { training?: boolean } = {},
): tf.Tensor1D {
  validate(model, prompts, candidatesPerPrompt);
  const adapter = model.useAdapter(opts);
  if (activeFusedOps()?.rangeAttention) {
    // webgpu: prompts and candidates packed in one differentiable pass.
    const packed = packRows(
      prompts,
      candidatesPerPrompt,
      prompts.map((_, i) => i),
    );
    return tf.tidy(() =>
      packed.rows.length === 0
        ? (tf.zeros([0]) as tf.Tensor1D)
        : packedLogProbs(model, packed, adapter, { training: opts.training === true }),
    );
  }
  const nP = prompts.length;
  const pSeq = Math.max(...prompts.map((p) => p.length));
  const pIds = new Int32Array(nP * pSeq);
  prompts.forEach((p, i) => {
    pIds.set(p as number[], i * pSeq);
  });
  const pLens = Int32Array.from(prompts.map((p) => p.length));
  const maxC = Math.max(1, ...candidatesPerPrompt.map((c) => c.length));
  // Output order: for each prompt i, candidate j, token k. `firstAt`/`restAt` map each source
  // (the prompt pass's first-token log-prob, the candidate pass's later ones) to that order.
  const firstTargets: number[] = [];
  const firstAt: number[] = [];
  const restRows: number[] = [];
  const restTargets: number[] = [];
  const restAt: number[] = [];
  let seq = 0;
  for (const list of candidatesPerPrompt) for (const c of list) seq = Math.max(seq, c.length - 1);
  const ids = new Int32Array(nP * maxC * Math.max(1, seq));
  let o = 0;
  candidatesPerPrompt.forEach((list, i) => {
    list.forEach((c, j) => {
      firstTargets.push(c[0] as number);
      firstAt.push(o++);
      const r = i * maxC + j;
      ids.set(c.slice(0, c.length - 1) as number[], r * Math.max(1, seq));
      for (let k = 1; k < c.length; k++) {
        restRows.push(r * seq + k - 1);
        restTargets.push(c[k] as number);
        restAt.push(o++);
      }
    });
  });
  const total = o;
  return tf.tidy(() => {
    const training = opts.training === true;
    const prompt = model.forward({
      ids: pIds,
      batch: nP,
      seq: pSeq,
      adapter,
      training,
      wantCache: true,
      outputRows: Array.from(pLens, (l) => l - 1),
    });
    const ownerRows = candidatesPerPrompt.flatMap((list, i) => list.map(() => i));
    const parts: tf.Tensor1D[] = [
      gatherLogProbs(
        model,
        prompt.hidden,
        Int32Array.from(ownerRows),
        Int32Array.from(firstTargets),
      ),
    ];
    const order: number[] = [...firstAt];
    if (restRows.length > 0) {
      const pastValid = Int32Array.from(
        { length: nP * maxC },
        (_, r) => pLens[Math.floor(r / maxC)]!,
      );
      const { hidden } = model.forward({
        ids,
        batch: nP * maxC,
        seq,
        pastValid,
        sharedPast: { cache: prompt.cache ?? [], perGroup: maxC },
        adapter,
        training,
      });
      parts.push(
        gatherLogProbs(model, hidden, Int32Array.from(restRows), Int32Array.from(restTargets)),
      );
      order.push(...restAt);
    }
    // Scatter back to prompt/candidate/token order with one gather.
    const inverse = new Int32Array(total);
    order.forEach((dest, src) => {
      inverse[dest] = src;
    });
    const all = parts.length === 1 ? parts[0]! : tf.concat(parts);
    return tf.gather(all, tf.tensor1d(inverse, 'int32')) as tf.Tensor1D;
  });
}
