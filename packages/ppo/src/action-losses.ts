import * as tf from '@tensorflow/tfjs-core';
import { normaliseAdvantages } from './advantage-normalisation.js';
import { PpoConfigError } from './errors.js';
import { nextTokenSets } from './label-tokens.js';
import {
  approxKl,
  clipIndicator,
  entropyBonus,
  policyLoss,
  valueClipOf,
  valueLoss,
} from './losses.js';
import type { LossFn, MinibatchLosses, PpoUpdateArgs } from './minibatch.js';
import { checkShape } from './minibatch.js';
import { toPadded } from './padding.js';

/**
 * Loss closures of one action-level minibatch (twosome). The action log-prob is that of the
 * sampler that acted: with `tokenSpace: 'vocabulary'` log π̃, the softmax over the step's
 * candidates of each one's summed full-vocabulary token log-probs divided by its normaliser
 * (TWOSOME's); with `tokenSpace: 'labels'` the label-tree product's, the sum of the chosen
 * label's token log-probs renormalised over the tokens that continue a valid label (these label
 * probabilities sum to 1 over the candidates, so no softmax is taken), as POAD acts.
 */
export function actionLevelLosses(
  args: PpoUpdateArgs,
  idx: Int32Array,
  chunks: readonly Int32Array[],
): MinibatchLosses {
  const { buffer, advantages } = args;
  const normBySample = normalisedBySample(args, idx);
  const total = idx.length;
  let tokens = 0;
  const valueFns: LossFn[] = [];
  const policyFns: LossFn[] = [];
  for (const chunk of chunks) {
    const samples: ChunkSamples = {
      chunk,
      prompts: Array.from(chunk, (i) => buffer.prompt(i)),
      vOld: Float32Array.from(chunk, (i) => buffer.values[buffer.actionOffsets[i]!]!),
      returns: Float32Array.from(chunk, (i) => advantages.returns[i]!),
      adv: Float32Array.from(chunk, (i) => normBySample.get(i)!),
      lpOld: Float32Array.from(chunk, (i) => buffer.actionLogProbs[i]!),
    };
    const rows = candidateRows(args, chunk);
    tokens += rows.tokens;
    valueFns.push(actionValueLoss(args, samples, rows.firstTokens, total));
    policyFns.push(
      actionPolicyLoss(args, samples, rows, candidateLayout(args, chunk, rows), total),
    );
  }
  return { valueFns, policyFns, denominator: total, tokens };
}

/** Each sample's advantage standardised over the minibatch (`advantageNormalisation`). */
function normalisedBySample(args: PpoUpdateArgs, idx: Int32Array): Map<number, number> {
  const flat = Float64Array.from(idx, (i) => args.advantages.advantages[i]!);
  const norm = normaliseAdvantages(
    flat,
    null,
    args.config.advantageNormalisation,
    new Uint8Array(flat.length).fill(1),
  );
  const normBySample = new Map<number, number>();
  idx.forEach((i, j) => {
    normBySample.set(i, norm[j]!);
  });
  return normBySample;
}

/** One chunk's samples and their per-sample arrays. */
interface ChunkSamples {
  readonly chunk: Int32Array;
  readonly prompts: Int32Array[];
  /** The critic's values V(o) at the rollout. */
  readonly vOld: Float32Array;
  readonly returns: Float32Array;
  /** Standardised advantages. */
  readonly adv: Float32Array;
  /** The sampler's log-prob of the chosen action at the rollout. */
  readonly lpOld: Float32Array;
}

/** Every candidate of every sample of a chunk, as the rows of one scoring batch. */
interface CandidateRows {
  readonly prompts: Int32Array[];
  readonly ids: Int32Array[];
  /** Each candidate's TWOSOME normaliser n(a). */
  readonly normalisers: number[];
  /** tokenSpace 'labels': the label-tree continuations at every token of every candidate. */
  readonly allowed: Int32Array[][];
  /** tokenSpace 'labels': each sample's distinct first tokens (its critic's allowed ids). */
  readonly firstTokens: Int32Array[];
  /** The most candidates of one sample. */
  readonly cMax: number;
  /** Candidate tokens scored. */
  readonly tokens: number;
}

function candidateRows(args: PpoUpdateArgs, chunk: Int32Array): CandidateRows {
  const { buffer } = args;
  const labelTree = args.config.tokenSpace === 'labels';
  const rows: CandidateRows = {
    prompts: [],
    ids: [],
    normalisers: [],
    allowed: [],
    firstTokens: [],
    cMax: 1,
    tokens: 0,
  };
  let cMax = 1;
  let tokens = 0;
  for (const i of chunk) {
    if (buffer.chosen[i]! < 0) {
      throw new PpoConfigError(
        'config.algorithm',
        "'twosome' needs restricted action spaces (the rollout has an open one).",
      );
    }
    const cands = buffer.candidates(i);
    cMax = Math.max(cMax, cands.length);
    if (labelTree) {
      rows.allowed.push(...nextTokenSets(cands));
      rows.firstTokens.push(Int32Array.from(new Set(cands.map((c) => c[0]!))));
    }
    for (let c = 0; c < cands.length; c++) {
      rows.prompts.push(buffer.prompt(i));
      rows.ids.push(cands[c]!);
      rows.normalisers.push(buffer.candidateNormalisers[buffer.candidateOffsets[i]! + c]!);
      tokens += cands[c]!.length;
    }
  }
  return { ...rows, cMax, tokens };
}

/** The masks and selection matrices that take a chunk's candidate rows back to its samples. */
interface CandidateLayout {
  /** The longest candidate's token count (at least 1). */
  readonly width: number;
  /** `[rows, width]`: 1 at each row's real tokens. */
  readonly tokMask: Float32Array;
  /**
   * `[b·cMax, rows]`: selection[j·cMax + c, row] = 1 picks candidate c of sample j (a matmul
   * instead of a gather: its gradient needs no UnsortedSegmentSum kernel, missing on some
   * backends).
   */
  readonly selection: Float32Array;
  /** `[b, cMax]`: 1 where sample j has a candidate c. */
  readonly candMask: Float32Array;
  /** `[b, cMax]`: 1 at each sample's chosen candidate. */
  readonly chosenHot: Float32Array;
}

function candidateLayout(
  args: PpoUpdateArgs,
  chunk: Int32Array,
  { ids, cMax }: CandidateRows,
): CandidateLayout {
  const { buffer } = args;
  const b = chunk.length;
  const rows = ids.length;
  let width = 1;
  for (const r of ids) width = Math.max(width, r.length);
  const tokMask = new Float32Array(rows * width);
  ids.forEach((r, j) => {
    tokMask.fill(1, j * width, j * width + r.length);
  });
  const selection = new Float32Array(b * cMax * rows);
  const candMask = new Float32Array(b * cMax);
  const chosenHot = new Float32Array(b * cMax);
  let row = 0;
  chunk.forEach((i, j) => {
    const count = buffer.candidateOffsets[i + 1]! - buffer.candidateOffsets[i]!;
    for (let c = 0; c < count; c++, row++) {
      selection[(j * cMax + c) * rows + row] = 1;
      candMask[j * cMax + c] = 1;
    }
    chosenHot[j * cMax + buffer.chosen[i]!] = 1;
  });
  return { width, tokMask, selection, candMask, chosenHot };
}

/** A chunk's critic loss: the value loss of V(o) per sample, × valueLossCoef, ÷ `total`. */
function actionValueLoss(
  args: PpoUpdateArgs,
  { prompts, vOld, returns }: ChunkSamples,
  firstTokens: Int32Array[],
  total: number,
): LossFn {
  const { config, policy } = args;
  const b = prompts.length;
  const labelTree = config.tokenSpace === 'labels';
  return (logged) => {
    const v = labelTree ? policy.promptValues(prompts, firstTokens) : policy.promptValues(prompts);
    checkShape(v, [b], 'policy.promptValues');
    const per = valueLoss(
      v,
      tf.tensor1d(vOld),
      tf.tensor1d(returns),
      valueClipOf(config),
      config.valueLoss,
      config.huberDelta,
    );
    const s = tf.mul(tf.sum(per), config.valueLossCoef) as tf.Scalar;
    logged.pg.push(tf.keep(s));
    return tf.div(s, total) as tf.Scalar;
  };
}

/**
 * A chunk's actor loss: the clipped surrogate on the sampler's action log-prob minus the entropy
 * bonus over the candidates, ÷ `total`. Kept in one piece: it is one chain of tensor operations
 * from the candidates' token log-probs to the loss, each step commented.
 */
function actionPolicyLoss(
  args: PpoUpdateArgs,
  { chunk, prompts, adv, lpOld }: ChunkSamples,
  rows: CandidateRows,
  { width, tokMask, selection, candMask, chosenHot }: CandidateLayout,
  total: number,
): LossFn {
  const { config } = args;
  const b = chunk.length;
  const cMax = rows.cMax;
  const count = rows.ids.length;
  const labelTree = config.tokenSpace === 'labels';
  return (logged) => {
    const lpRaw = candidateTokenLogProbs(args, chunk, prompts, rows, width);
    const tm = tf.cast(tf.tensor2d(tokMask, [count, width]), 'bool');
    const lp = tf.where(tm, lpRaw, tf.zerosLike(lpRaw));
    // log π̃: summed token log-probs ÷ n(a), softmax over each sample's candidates; on the
    // label tree the summed restricted log-probs are the label's log-prob already (n(a) = 1).
    const logits = labelTree ? tf.sum(lp, 1) : tf.div(tf.sum(lp, 1), tf.tensor1d(rows.normalisers));
    const cm = tf.cast(tf.tensor2d(candMask, [b, cMax]), 'bool');
    const gathered = tf.reshape(
      tf.matMul(tf.tensor2d(selection, [b * cMax, count]), tf.reshape(logits, [count, 1])),
      [b, cMax],
    );
    const masked = tf.where(cm, gathered, tf.fill([b, cMax], -1e9));
    const logSoft = labelTree ? masked : tf.logSoftmax(masked);
    const lpNew = tf.sum(tf.mul(logSoft, tf.tensor2d(chosenHot, [b, cMax])), 1);
    const probs = tf.where(cm, tf.exp(logSoft), tf.zerosLike(logSoft));
    const ent = tf.neg(tf.sum(tf.mul(probs, tf.where(cm, logSoft, tf.zerosLike(logSoft))), 1));
    const old = tf.tensor1d(lpOld);
    const pg = tf.sum(policyLoss(lpNew, old, tf.tensor1d(adv), config.clip)) as tf.Scalar;
    const entSum = tf.sum(ent) as tf.Scalar;
    logged.pg.push(tf.keep(pg));
    logged.entropy.push(tf.keep(entSum));
    logged.kl.push(tf.keep(tf.sum(approxKl(lpNew, old))));
    logged.clipped.push(tf.keep(tf.sum(clipIndicator(lpNew, old, config.clip))));
    return tf.div(tf.add(pg, entropyBonus(entSum, config.entropyCoef)), total) as tf.Scalar;
  };
}

/**
 * Padded `[rows, width]` token log-probs of every candidate row: on the label tree every row's
 * tokens renormalised over its continuations; else each prompt once for all its candidates when
 * the policy can, or one row per candidate.
 */
function candidateTokenLogProbs(
  args: PpoUpdateArgs,
  chunk: Int32Array,
  prompts: readonly Int32Array[],
  rows: CandidateRows,
  width: number,
): tf.Tensor {
  const { buffer, config, policy } = args;
  const rowBatch = { prompts: rows.prompts, actions: rows.ids, width };
  if (config.tokenSpace === 'labels') {
    return toPadded(
      policy.scoreTokens({ ...rowBatch, allowed: rows.allowed }).logProbs,
      rowBatch,
      'policy.scoreTokens',
    );
  }
  if (policy.scoreCandidateTokens) {
    return toPadded(
      policy.scoreCandidateTokens(
        prompts,
        Array.from(chunk, (i) => buffer.candidates(i)),
      ),
      rowBatch,
      'policy.scoreCandidateTokens',
    );
  }
  return toPadded(policy.scoreTokens(rowBatch).logProbs, rowBatch, 'policy.scoreTokens');
}
