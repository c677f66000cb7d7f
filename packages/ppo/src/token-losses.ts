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
import { padTokenRows, tokenBatchOf } from './token-batch.js';

/** Loss closures of one token-level minibatch (poad, ntpo, archer). */
export function tokenLevelLosses(
  args: PpoUpdateArgs,
  idx: Int32Array,
  chunks: readonly Int32Array[],
): MinibatchLosses {
  const { buffer, advantages, config, policy } = args;
  // Advantage standardisation over the minibatch's real tokens (ragged storage: no padding).
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

  const valueFns: LossFn[] = [];
  const policyFns: LossFn[] = [];
  for (const chunk of chunks) {
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
    const shape: [number, number] = [chunk.length, batch.width];
    valueFns.push((logged) => {
      const m = tf.tensor2d(mask, shape);
      const vNewRaw = toPadded(policy.tokenValues(batch), batch, 'policy.tokenValues');
      const vNew = tf.where(tf.cast(m, 'bool'), vNewRaw, tf.zerosLike(vNewRaw));
      const per = valueLoss(
        vNew,
        tf.tensor2d(vOld, shape),
        tf.tensor2d(returns, shape),
        valueClipOf(config),
        config.valueLoss,
        config.huberDelta,
      );
      const s = tf.mul(maskedSum(per, m), config.valueLossCoef) as tf.Scalar;
      logged.pg.push(tf.keep(s));
      return tf.div(s, total) as tf.Scalar;
    });
    policyFns.push((logged) => {
      const m = tf.tensor2d(mask, shape);
      const scores = policy.scoreTokens(batch);
      const lpRaw = toPadded(scores.logProbs, batch, 'policy.scoreTokens(logProbs)');
      const entRaw = toPadded(scores.entropies, batch, 'policy.scoreTokens(entropies)');
      if (fusedTokenLoss()) {
        // One program for the four sums (and two for their gradient) where the backend has it.
        const [pg, entSum, kl, clipped] = tf.engine().runKernel(
          PPO_TOKEN_LOSS_KERNEL,
          {
            lpNew: lpRaw,
            lpOld: tf.tensor2d(logpOld, shape),
            adv: tf.tensor2d(adv, shape),
            ent: entRaw,
            mask: m,
          } as unknown as tf.NamedTensorMap,
          { clip: config.clip },
        ) as tf.Scalar[];
        logged.pg.push(tf.keep(pg!));
        logged.entropy.push(tf.keep(entSum!));
        logged.kl.push(tf.keep(kl!));
        logged.clipped.push(tf.keep(clipped!));
        return tf.div(tf.add(pg!, entropyBonus(entSum!, config.entropyCoef)), total) as tf.Scalar;
      }
      const mb = tf.cast(m, 'bool');
      const lpNew = tf.where(mb, lpRaw, tf.zerosLike(lpRaw));
      const ent = tf.where(mb, entRaw, tf.zerosLike(entRaw));
      const lpOld = tf.tensor2d(logpOld, shape);
      const pg = maskedSum(policyLoss(lpNew, lpOld, tf.tensor2d(adv, shape), config.clip), m);
      const entSum = maskedSum(ent, m);
      logged.pg.push(tf.keep(pg));
      logged.entropy.push(tf.keep(entSum));
      logged.kl.push(tf.keep(maskedSum(approxKl(lpNew, lpOld), m)));
      logged.clipped.push(tf.keep(maskedSum(clipIndicator(lpNew, lpOld, config.clip), m)));
      return tf.div(tf.add(pg, entropyBonus(entSum, config.entropyCoef)), total) as tf.Scalar;
    });
  }
  return { valueFns, policyFns, denominator: total, tokens: total };
}
