import * as tf from '@tensorflow/tfjs-core';
import { normaliseAdvantages } from './advantage-normalisation.js';
import {
  approxKl,
  clipIndicator,
  entropyBonus,
  fusedTokenLoss,
  maskedSum,
  PPO_TOKEN_LOSS_KERNEL,
  policyLoss,
  valueClipOf,
  valueLoss,
} from './losses.js';
import type { LossFn, MinibatchLosses, PpoUpdateArgs } from './minibatch.js';
import { toPadded } from './padding.js';
import type { TokenBatch } from './policy.js';
import { padTokenRows, tokenBatchOf } from './token-batch.js';

/**
 * Loss closures of one token-level minibatch (poad, ntpo, archer): per chunk, the critic's value
 * loss and the actor's clipped surrogate minus the entropy bonus, each a masked sum over the
 * chunk's real tokens divided by the minibatch's real-token count.
 */
export function tokenLevelLosses(
  args: PpoUpdateArgs,
  idx: Int32Array,
  chunks: readonly Int32Array[],
): MinibatchLosses {
  const { total, normByToken } = normalisedByToken(args, idx);
  const valueFns: LossFn[] = [];
  const policyFns: LossFn[] = [];
  for (const chunk of chunks) {
    const rows = chunkRows(args, chunk, normByToken);
    valueFns.push(tokenValueLoss(args, rows, total));
    policyFns.push(tokenPolicyLoss(args, rows, total));
  }
  return { valueFns, policyFns, denominator: total, tokens: total };
}

/**
 * Each token's advantage standardised over the minibatch's real tokens (ragged storage: no
 * padding; `advantageNormalisation`), at its place in the buffer (0 at the tokens of other
 * samples), and the minibatch's real-token count `total`.
 */
function normalisedByToken(
  args: PpoUpdateArgs,
  idx: Int32Array,
): { total: number; normByToken: Float32Array } {
  const { buffer, advantages, config } = args;
  let total = 0;
  for (const i of idx) total += buffer.actionLength(i);
  const flat = new Float64Array(total);
  let o = 0;
  for (const i of idx) {
    flat.set(
      advantages.advantages.subarray(buffer.actionOffsets[i]!, buffer.actionOffsets[i + 1]!),
      o,
    );
    o += buffer.actionLength(i);
  }
  const normFlat = normaliseAdvantages(
    flat,
    null,
    config.advantageNormalisation,
    Array.from(idx, (i) => buffer.actionLength(i)),
  );
  const normByToken = new Float32Array(buffer.tokenCount);
  o = 0;
  for (const i of idx) {
    for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++)
      normByToken[k] = normFlat[o++]!;
  }
  return { total, normByToken };
}

/** One chunk's token batch and its per-token inputs, padded to `shape` = `[rows, width]`. */
interface ChunkRows {
  readonly batch: TokenBatch;
  readonly shape: [number, number];
  /** 1 at each row's real tokens. */
  readonly mask: Float32Array;
  /** The behaviour log-probs. */
  readonly logpOld: Float32Array;
  /** Standardised advantages. */
  readonly adv: Float32Array;
  readonly returns: Float32Array;
  /** The critic's values at the rollout. */
  readonly vOld: Float32Array;
}

/** The samples `chunk` as padded rows (`tokenSpace: 'labels'`: with the label sets). */
function chunkRows(args: PpoUpdateArgs, chunk: Int32Array, normByToken: Float32Array): ChunkRows {
  const { buffer, advantages, config } = args;
  const batch = tokenBatchOf(buffer, chunk, config.tokenSpace === 'labels');
  const { mask, mats } = padTokenRows(buffer, chunk, batch.width, [
    buffer.logProbs,
    normByToken,
    advantages.returns,
    buffer.values,
  ]);
  const [logpOld, adv, returns, vOld] = mats as [
    Float32Array,
    Float32Array,
    Float32Array,
    Float32Array,
  ];
  return { batch, shape: [chunk.length, batch.width], mask, logpOld, adv, returns, vOld };
}

/** A chunk's critic loss: the masked sum of the value loss per token × valueLossCoef, ÷ `total`. */
function tokenValueLoss(args: PpoUpdateArgs, rows: ChunkRows, total: number): LossFn {
  const { config, policy } = args;
  const { batch, shape } = rows;
  return (logged) => {
    const m = tf.tensor2d(rows.mask, shape);
    const vNewRaw = toPadded(policy.tokenValues(batch), batch, 'policy.tokenValues');
    const vNew = tf.where(tf.cast(m, 'bool'), vNewRaw, tf.zerosLike(vNewRaw));
    const per = valueLoss(
      vNew,
      tf.tensor2d(rows.vOld, shape),
      tf.tensor2d(rows.returns, shape),
      valueClipOf(config),
      config.valueLoss,
      config.huberDelta,
    );
    const s = tf.mul(maskedSum(per, m), config.valueLossCoef) as tf.Scalar;
    logged.pg.push(tf.keep(s));
    return tf.div(s, total) as tf.Scalar;
  };
}

/** The masked sums of a chunk's actor terms over its real tokens. */
interface PolicySums {
  /** The clipped surrogate. */
  readonly pg: tf.Scalar;
  readonly entSum: tf.Scalar;
  /** Approx KL(π_old ‖ π). */
  readonly kl: tf.Scalar;
  /** Tokens whose ratio was clipped. */
  readonly clipped: tf.Scalar;
}

/** The policy's padded token log-probs and entropies of a chunk, with its mask on the device. */
interface ScoredRows {
  readonly lpRaw: tf.Tensor;
  readonly entRaw: tf.Tensor;
  readonly mask: tf.Tensor2D;
}

/** A chunk's actor loss: the clipped surrogate minus the entropy bonus, ÷ `total`. */
function tokenPolicyLoss(args: PpoUpdateArgs, rows: ChunkRows, total: number): LossFn {
  const { config, policy } = args;
  const { batch } = rows;
  return (logged) => {
    const mask = tf.tensor2d(rows.mask, rows.shape);
    const scores = policy.scoreTokens(batch);
    const scored: ScoredRows = {
      lpRaw: toPadded(scores.logProbs, batch, 'policy.scoreTokens(logProbs)'),
      entRaw: toPadded(scores.entropies, batch, 'policy.scoreTokens(entropies)'),
      mask,
    };
    const sums = fusedTokenLoss()
      ? fusedPolicySums(rows, scored, config.clip)
      : maskedPolicySums(rows, scored, config.clip);
    logged.pg.push(tf.keep(sums.pg));
    logged.entropy.push(tf.keep(sums.entSum));
    logged.kl.push(tf.keep(sums.kl));
    logged.clipped.push(tf.keep(sums.clipped));
    return tf.div(
      tf.add(sums.pg, entropyBonus(sums.entSum, config.entropyCoef)),
      total,
    ) as tf.Scalar;
  };
}

/**
 * The four sums by the backend's fused kernel ({@link PPO_TOKEN_LOSS_KERNEL}): one program for
 * them, and two for their gradient.
 */
function fusedPolicySums(
  rows: ChunkRows,
  { lpRaw, entRaw, mask }: ScoredRows,
  clip: number,
): PolicySums {
  const [pg, entSum, kl, clipped] = tf.engine().runKernel(
    PPO_TOKEN_LOSS_KERNEL,
    {
      lpNew: lpRaw,
      lpOld: tf.tensor2d(rows.logpOld, rows.shape),
      adv: tf.tensor2d(rows.adv, rows.shape),
      ent: entRaw,
      mask,
    } as unknown as tf.NamedTensorMap,
    { clip },
  ) as tf.Scalar[];
  return { pg: pg!, entSum: entSum!, kl: kl!, clipped: clipped! };
}

/** The four sums by separate operations, the padding zeroed first. */
function maskedPolicySums(
  rows: ChunkRows,
  { lpRaw, entRaw, mask }: ScoredRows,
  clip: number,
): PolicySums {
  const { shape } = rows;
  const mb = tf.cast(mask, 'bool');
  const lpNew = tf.where(mb, lpRaw, tf.zerosLike(lpRaw));
  const ent = tf.where(mb, entRaw, tf.zerosLike(entRaw));
  const lpOld = tf.tensor2d(rows.logpOld, shape);
  const pg = maskedSum(policyLoss(lpNew, lpOld, tf.tensor2d(rows.adv, shape), clip), mask);
  const entSum = maskedSum(ent, mask);
  return {
    pg,
    entSum,
    kl: maskedSum(approxKl(lpNew, lpOld), mask),
    clipped: maskedSum(clipIndicator(lpNew, lpOld, clip), mask),
  };
}
