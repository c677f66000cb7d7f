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
  const { buffer, advantages, config, policy } = args;
  const flat = Float64Array.from(idx, (i) => advantages.advantages[i]!);
  const norm = normaliseAdvantages(
    flat,
    null,
    config.advantageNormalisation,
    new Uint8Array(flat.length).fill(1),
  );
  const normBySample = new Map<number, number>();
  idx.forEach((i, j) => {
    normBySample.set(i, norm[j]!);
  });
  const total = idx.length;
  const labelTree = config.tokenSpace === 'labels';
  let tokens = 0;

  const valueFns: LossFn[] = [];
  const policyFns: LossFn[] = [];
  for (const chunk of chunks) {
    const b = chunk.length;
    const prompts = Array.from(chunk, (i) => buffer.prompt(i));
    const vOld = Float32Array.from(chunk, (i) => buffer.values[buffer.actionOffsets[i]!]!);
    const returns = Float32Array.from(chunk, (i) => advantages.returns[i]!);
    const adv = Float32Array.from(chunk, (i) => normBySample.get(i)!);
    const lpOld = Float32Array.from(chunk, (i) => buffer.actionLogProbs[i]!);
    // Every candidate of every sample, as rows of one scoring batch.
    const rowPrompts: Int32Array[] = [];
    const rowIds: Int32Array[] = [];
    const rowNorm: number[] = [];
    // tokenSpace 'labels': the label-tree continuations at every token of every candidate.
    const rowAllowed: Int32Array[][] = [];
    const firstTokens: Int32Array[] = [];
    let cMax = 1;
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
        rowAllowed.push(...nextTokenSets(cands));
        firstTokens.push(Int32Array.from(new Set(cands.map((c) => c[0]!))));
      }
      for (let c = 0; c < cands.length; c++) {
        rowPrompts.push(buffer.prompt(i));
        rowIds.push(cands[c]!);
        rowNorm.push(buffer.candidateNormalisers[buffer.candidateOffsets[i]! + c]!);
        tokens += cands[c]!.length;
      }
    }
    const rows = rowIds.length;
    let width = 1;
    for (const r of rowIds) width = Math.max(width, r.length);
    const tokMask = new Float32Array(rows * width);
    rowIds.forEach((r, j) => {
      tokMask.fill(1, j * width, j * width + r.length);
    });
    // selection[j·cMax + c, row] = 1 picks candidate c of sample j (a matmul instead of a
    // gather: its gradient needs no UnsortedSegmentSum kernel, missing on some backends).
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

    valueFns.push((logged) => {
      const v = labelTree
        ? policy.promptValues(prompts, firstTokens)
        : policy.promptValues(prompts);
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
    });
    policyFns.push((logged) => {
      const shape: [number, number] = [rows, width];
      const rowBatch = { prompts: rowPrompts, actions: rowIds, width };
      // Each prompt once for all its candidates when the policy can; else one row per candidate.
      // The label tree's token space: every row's tokens renormalised over its continuations.
      const lpRaw = labelTree
        ? toPadded(
            policy.scoreTokens({ ...rowBatch, allowed: rowAllowed }).logProbs,
            rowBatch,
            'policy.scoreTokens',
          )
        : policy.scoreCandidateTokens
          ? toPadded(
              policy.scoreCandidateTokens(
                prompts,
                Array.from(chunk, (i) => buffer.candidates(i)),
              ),
              rowBatch,
              'policy.scoreCandidateTokens',
            )
          : toPadded(policy.scoreTokens(rowBatch).logProbs, rowBatch, 'policy.scoreTokens');
      const tm = tf.cast(tf.tensor2d(tokMask, shape), 'bool');
      const lp = tf.where(tm, lpRaw, tf.zerosLike(lpRaw));
      // log π̃: summed token log-probs ÷ n(a), softmax over each sample's candidates; on the
      // label tree the summed restricted log-probs are the label's log-prob already (n(a) = 1).
      const logits = labelTree ? tf.sum(lp, 1) : tf.div(tf.sum(lp, 1), tf.tensor1d(rowNorm));
      const cm = tf.cast(tf.tensor2d(candMask, [b, cMax]), 'bool');
      const gathered = tf.reshape(
        tf.matMul(tf.tensor2d(selection, [b * cMax, rows]), tf.reshape(logits, [rows, 1])),
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
    });
  }
  return { valueFns, policyFns, denominator: total, tokens };
}
