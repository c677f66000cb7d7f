import {
  type Adam,
  approxKl,
  clipGradNorm,
  clipIndicator,
  maskedSum,
  NonFiniteUpdateError,
  padTokenRows,
  policyLoss,
  type RolloutBuffer,
  type SeededRng,
  tokenBatchOf,
  toPadded,
  type UpdateDiagnostics,
  type UpdateStats,
} from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import type { GroupConfig } from './config.js';
import { GroupConfigError } from './errors.js';
import type { GroupPolicy } from './policy.js';

/** What one group-relative update did (`@poad/ppo`'s diagnostics where the quantity is the same). */
export interface GroupUpdateDiagnostics
  extends UpdateStats,
    Pick<UpdateDiagnostics, 'entropy' | 'clipFraction'> {
  /** Mean clipped surrogate over the tokens of the minibatches that stepped. */
  policyLoss: number;
  /** Approximate KL(π_old ‖ π) at the tokens. */
  approxKl: number;
  /** k3 estimate of KL(π ‖ π_ref) at the tokens (NaN without a reference pass). */
  klToReference: number;
}

/**
 * The reference policy's log-prob of every token of a buffer (aligned with `buffer.actionIds`),
 * computed once per rollout in minibatch-sized passes; `null` when `klCoef` is 0.
 */
export async function referenceLogProbs(
  policy: GroupPolicy,
  buffer: RolloutBuffer,
  config: Pick<GroupConfig, 'klCoef' | 'tokenSpace' | 'numMinibatches'>,
): Promise<Float32Array | null> {
  if (config.klCoef === 0) return null;
  if (!policy.referenceLogProbs) {
    throw new GroupConfigError(
      'config.klCoef',
      'a KL to the reference needs a policy with referenceLogProbs (the base model with its adapters off); set klCoef 0 or use such a policy',
    );
  }
  const out = new Float32Array(buffer.tokenCount);
  const chunk = Math.max(1, Math.ceil(buffer.size / config.numMinibatches));
  for (let start = 0; start < buffer.size; start += chunk) {
    const idx = Array.from({ length: Math.min(chunk, buffer.size - start) }, (_, j) => start + j);
    const batch = tokenBatchOf(buffer, idx, config.tokenSpace === 'labels');
    const t = tf.tidy(() =>
      toPadded(policy.referenceLogProbs!(batch), batch, 'policy.referenceLogProbs'),
    );
    const data = (await t.data()) as Float32Array;
    t.dispose();
    idx.forEach((i, j) => {
      out.set(
        data.subarray(j * batch.width, j * batch.width + buffer.actionLength(i)),
        buffer.actionOffsets[i]!,
      );
    });
  }
  return out;
}

/**
 * One update over a group rollout: `epochs` passes over a fresh seeded permutation of its steps,
 * cut into `numMinibatches` minibatches (⌈S / numMinibatches⌉ steps each, the last smaller). Per
 * minibatch the loss is the mean over its real tokens of
 *
 *   max(−ρ·Â, −clip(ρ, 1±ε)·Â) + klCoef·(e^{log π_ref − log π} − (log π_ref − log π) − 1) − c_H·H
 *
 * with ρ = π/π_old and Â the token's step advantage; the gradient is norm-clipped and AdamW
 * steps. A minibatch whose loss or gradient norm is NaN or ±∞ is skipped (weights and moments
 * untouched); after `maxNonFiniteSkips` in a row (counting from `nonFiniteStreak`) it throws
 * `NonFiniteUpdateError`.
 */
export async function groupUpdate(args: {
  policy: GroupPolicy;
  buffer: RolloutBuffer;
  advantages: Float64Array;
  reference: Float32Array | null;
  config: GroupConfig;
  rng: SeededRng;
  optimizer: Adam;
  nonFiniteStreak: number;
}): Promise<GroupUpdateDiagnostics> {
  const { policy, buffer, config, rng, reference } = args;
  policy.enterPhase?.('update');
  const start = performance.now();
  const size = buffer.size;
  const mbSize = Math.max(1, Math.ceil(size / config.numMinibatches));
  // Per token: its step's advantage.
  const tokenAdv = new Float32Array(buffer.tokenCount);
  for (let i = 0; i < size; i++)
    tokenAdv.fill(args.advantages[i]!, buffer.actionOffsets[i]!, buffer.actionOffsets[i + 1]!);
  const sums = { pg: 0, entropy: 0, kl: 0, clipped: 0, ref: 0, tokens: 0, norm: 0 };
  let minibatches = 0;
  let steps = 0;
  let skips = 0;
  let streak = args.nonFiniteStreak;
  let tokensSeen = 0;
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const perm = rng.permutation(size);
    for (let from = 0; from < size; from += mbSize) {
      const idx = perm.subarray(from, Math.min(size, from + mbSize));
      const batch = tokenBatchOf(buffer, idx, config.tokenSpace === 'labels');
      const perToken = [buffer.logProbs, tokenAdv, ...(reference ? [reference] : [])];
      const { mask, mats } = padTokenRows(buffer, idx, batch.width, perToken);
      let tokens = 0;
      for (const m of mask) tokens += m;
      tokensSeen += tokens;
      minibatches += 1;
      const shape: [number, number] = [idx.length, batch.width];
      const maskT = tf.tensor2d(mask, shape);
      const oldT = tf.tensor2d(mats[0]!, shape);
      const advT = tf.tensor2d(mats[1]!, shape);
      const refT = reference ? tf.tensor2d(mats[2]!, shape) : null;
      let logged: tf.Tensor | null = null;
      try {
        const { value, grads } = tf.variableGrads(() => {
          const scores = policy.scoreTokens(batch);
          const logp = toPadded(scores.logProbs, batch, 'policy.scoreTokens');
          const ent = toPadded(scores.entropies, batch, 'policy.scoreTokens');
          const pg = maskedSum(policyLoss(logp, oldT, advT, config.clip), maskT);
          const entropy = maskedSum(ent, maskT);
          const klOld = maskedSum(approxKl(logp, oldT), maskT);
          const clipped = maskedSum(clipIndicator(logp, oldT, config.clip), maskT);
          let refKl: tf.Scalar = tf.scalar(0);
          if (refT) {
            const d = tf.sub(refT, logp);
            refKl = maskedSum(tf.sub(tf.sub(tf.exp(d), d), 1), maskT);
          }
          logged = tf.keep(tf.stack([pg, entropy, klOld, clipped, refKl]));
          const total = tf.add(
            tf.sub(pg, tf.mul(entropy, config.entropyCoef)),
            tf.mul(refKl, config.klCoef),
          );
          return tf.div(total, Math.max(1, tokens)) as tf.Scalar;
        }, policy.actorVariables as tf.Variable[]);
        const loss = (await value.data())[0]!;
        const g = policy.actorVariables.map((v) => grads[v.name] ?? null);
        const clip = await clipGradNorm(g, config.maxGradNorm);
        const l = logged as tf.Tensor | null;
        const [pg, entropy, kl, clippedCount, ref] = l
          ? Array.from(await l.data())
          : [Number.NaN, Number.NaN, Number.NaN, Number.NaN, Number.NaN];
        const finite = [loss, clip.norm].every(Number.isFinite);
        if (finite) {
          args.optimizer.step(clip.grads);
          steps += 1;
          streak = 0;
          sums.pg += pg!;
          sums.entropy += entropy!;
          sums.kl += kl!;
          sums.clipped += clippedCount!;
          sums.ref += ref!;
          sums.tokens += tokens;
          sums.norm += clip.norm;
        } else {
          skips += 1;
          streak += 1;
        }
        tf.dispose([value, ...Object.values(grads)]);
        tf.dispose(clip.grads.filter((x): x is tf.Tensor => x !== null));
        if (!finite && streak >= config.maxNonFiniteSkips) {
          throw new NonFiniteUpdateError(
            streak,
            `epoch ${epoch + 1}, minibatch ${minibatches}: loss ${loss}, gradient norm ${clip.norm}`,
          );
        }
      } finally {
        const l = logged as tf.Tensor | null;
        l?.dispose();
        tf.dispose([maskT, oldT, advT, ...(refT ? [refT] : [])]);
      }
    }
  }
  const perToken = (x: number) => (sums.tokens > 0 ? x / sums.tokens : Number.NaN);
  const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
  return {
    policyLoss: perToken(sums.pg),
    entropy: perToken(sums.entropy),
    approxKl: perToken(sums.kl),
    clipFraction: perToken(sums.clipped),
    klToReference: reference ? perToken(sums.ref) : Number.NaN,
    actorGradNorm: steps > 0 ? sums.norm / steps : Number.NaN,
    minibatches,
    nonFiniteSkips: skips,
    nonFiniteStreak: streak,
    actorSteps: steps,
    seconds,
    tokensPerSec: tokensSeen / seconds,
  };
}
