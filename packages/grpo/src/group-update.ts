import {
  type Adam,
  approxKl,
  clipGradNorm,
  clipIndicator,
  maskedSum,
  NonFiniteStreak,
  padTokenRows,
  policyLoss,
  type RolloutBuffer,
  type SeededRng,
  type TokenBatch,
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

/** The arguments of {@link groupUpdate}. */
export interface GroupUpdateArgs {
  policy: GroupPolicy;
  buffer: RolloutBuffer;
  advantages: Float64Array;
  reference: Float32Array | null;
  config: GroupConfig;
  rng: SeededRng;
  optimizer: Adam;
  nonFiniteStreak: number;
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
export async function groupUpdate(args: GroupUpdateArgs): Promise<GroupUpdateDiagnostics> {
  const { policy, buffer, config, rng, reference } = args;
  policy.enterPhase?.('update');
  const start = performance.now();
  const size = buffer.size;
  const mbSize = Math.max(1, Math.ceil(size / config.numMinibatches));
  const tokenAdv = tokenAdvantages(buffer, args.advantages);
  const totals = new GroupTotals(args.nonFiniteStreak, config.maxNonFiniteSkips);
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const perm = rng.permutation(size);
    for (let from = 0; from < size; from += mbSize) {
      const idx = perm.subarray(from, Math.min(size, from + mbSize));
      const mb = minibatchOf(buffer, idx, tokenAdv, reference, config.tokenSpace);
      totals.seen(mb.tokens);
      // The logged sums, kept out of the gradient's tidy, are disposed here whatever happens.
      const logged: LoggedHolder = { tensor: null };
      try {
        const { value, grads } = minibatchGradients(policy, mb, config, logged);
        const v = await readMinibatch(policy, value, grads, logged.tensor, config.maxGradNorm);
        const finite = [v.loss, v.norm].every(Number.isFinite);
        if (finite) args.optimizer.step(v.clipped);
        tf.dispose([value, ...Object.values(grads)]);
        tf.dispose(v.clipped.filter((x): x is tf.Tensor => x !== null));
        totals.add(v, finite, mb.tokens, epoch);
      } finally {
        logged.tensor?.dispose();
        tf.dispose([mb.mask, mb.old, mb.adv, ...(mb.ref ? [mb.ref] : [])]);
      }
    }
  }
  return totals.diagnostics(reference !== null, start);
}

/** Per token of the buffer: its step's advantage. */
function tokenAdvantages(buffer: RolloutBuffer, advantages: Float64Array): Float32Array {
  const tokenAdv = new Float32Array(buffer.tokenCount);
  for (let i = 0; i < buffer.size; i++)
    tokenAdv.fill(advantages[i]!, buffer.actionOffsets[i]!, buffer.actionOffsets[i + 1]!);
  return tokenAdv;
}

/** One minibatch's token batch and its padded `[rows, width]` per-token inputs on the device. */
interface GroupMinibatch {
  readonly batch: TokenBatch;
  /** Real (unpadded) tokens. */
  readonly tokens: number;
  /** 1 at each row's real tokens. */
  readonly mask: tf.Tensor2D;
  /** The behaviour log-probs. */
  readonly old: tf.Tensor2D;
  /** Each token's step advantage. */
  readonly adv: tf.Tensor2D;
  /** The reference policy's log-probs (null without a reference pass). */
  readonly ref: tf.Tensor2D | null;
}

/** The steps `idx` of `buffer` as a minibatch (`tokenSpace: 'labels'`: with the label sets). */
function minibatchOf(
  buffer: RolloutBuffer,
  idx: Int32Array,
  tokenAdv: Float32Array,
  reference: Float32Array | null,
  tokenSpace: GroupConfig['tokenSpace'],
): GroupMinibatch {
  const batch = tokenBatchOf(buffer, idx, tokenSpace === 'labels');
  const perToken = [buffer.logProbs, tokenAdv, ...(reference ? [reference] : [])];
  const { mask, mats } = padTokenRows(buffer, idx, batch.width, perToken);
  let tokens = 0;
  for (const m of mask) tokens += m;
  const shape: [number, number] = [idx.length, batch.width];
  return {
    batch,
    tokens,
    mask: tf.tensor2d(mask, shape),
    old: tf.tensor2d(mats[0]!, shape),
    adv: tf.tensor2d(mats[1]!, shape),
    ref: reference ? tf.tensor2d(mats[2]!, shape) : null,
  };
}

/** Where the loss leaves its logged sums: `[pg, entropy, KL to π_old, clipped, KL to π_ref]`. */
interface LoggedHolder {
  tensor: tf.Tensor | null;
}

/**
 * The minibatch's loss (the masked sums of the clipped surrogate, −c_H·entropy and klCoef·k3 KL to
 * the reference, over its real tokens) and its gradients w.r.t. the actor's variables; the masked
 * sums are kept in `logged`.
 */
function minibatchGradients(
  policy: GroupPolicy,
  mb: GroupMinibatch,
  config: Pick<GroupConfig, 'clip' | 'entropyCoef' | 'klCoef'>,
  logged: LoggedHolder,
): { value: tf.Scalar; grads: tf.NamedTensorMap } {
  const { batch, mask, old, adv, ref, tokens } = mb;
  return tf.variableGrads(() => {
    const scores = policy.scoreTokens(batch);
    const logp = toPadded(scores.logProbs, batch, 'policy.scoreTokens');
    const ent = toPadded(scores.entropies, batch, 'policy.scoreTokens');
    const pg = maskedSum(policyLoss(logp, old, adv, config.clip), mask);
    const entropy = maskedSum(ent, mask);
    const klOld = maskedSum(approxKl(logp, old), mask);
    const clipped = maskedSum(clipIndicator(logp, old, config.clip), mask);
    let refKl: tf.Scalar = tf.scalar(0);
    if (ref) {
      const d = tf.sub(ref, logp);
      refKl = maskedSum(tf.sub(tf.sub(tf.exp(d), d), 1), mask);
    }
    logged.tensor = tf.keep(tf.stack([pg, entropy, klOld, clipped, refKl]));
    const total = tf.add(
      tf.sub(pg, tf.mul(entropy, config.entropyCoef)),
      tf.mul(refKl, config.klCoef),
    );
    return tf.div(total, Math.max(1, tokens)) as tf.Scalar;
  }, policy.actorVariables as tf.Variable[]);
}

/** What a minibatch's reads brought back, and its clipped gradients. */
interface MinibatchValues {
  readonly loss: number;
  /** The gradient's global norm before clipping. */
  readonly norm: number;
  /** The gradients clipped to `maxGradNorm` (new tensors; the caller disposes them). */
  readonly clipped: (tf.Tensor | null)[];
  /** The masked sums of the surrogate, entropy, KL to π_old, clip indicator and KL to π_ref. */
  readonly sums: readonly [number, number, number, number, number];
}

/** The loss, the gradient norm (with the clipped gradients) and the logged sums, read in turn. */
async function readMinibatch(
  policy: GroupPolicy,
  value: tf.Scalar,
  grads: tf.NamedTensorMap,
  logged: tf.Tensor | null,
  maxGradNorm: number,
): Promise<MinibatchValues> {
  const loss = (await value.data())[0]!;
  const g = policy.actorVariables.map((v) => grads[v.name] ?? null);
  const clip = await clipGradNorm(g, maxGradNorm);
  const sums = (
    logged
      ? Array.from(await logged.data())
      : [Number.NaN, Number.NaN, Number.NaN, Number.NaN, Number.NaN]
  ) as [number, number, number, number, number];
  return { loss, norm: clip.norm, clipped: clip.grads, sums };
}

/**
 * What an update's minibatches add up to: the logged sums and gradient norms of those that
 * stepped, the counts, and the non-finite streak, which throws `NonFiniteUpdateError` once it
 * reaches `maxNonFiniteSkips`.
 */
class GroupTotals {
  private readonly sums = { pg: 0, entropy: 0, kl: 0, clipped: 0, ref: 0, tokens: 0, norm: 0 };
  private minibatches = 0;
  private steps = 0;
  private tokensSeen = 0;
  private readonly streak: NonFiniteStreak;

  constructor(streak: number, maxNonFiniteSkips: number) {
    this.streak = new NonFiniteStreak(streak, maxNonFiniteSkips);
  }

  /** Counts a minibatch of `tokens` real tokens, whether it steps or not. */
  seen(tokens: number): void {
    this.tokensSeen += tokens;
    this.minibatches += 1;
  }

  /** Adds a minibatch that stepped (`finite`), or counts its skip; `epoch` names it in the error. */
  add(v: MinibatchValues, finite: boolean, tokens: number, epoch: number): void {
    if (!finite) {
      this.streak.skipped(
        () =>
          `epoch ${epoch + 1}, minibatch ${this.minibatches}: loss ${v.loss}, gradient norm ${v.norm}`,
      );
      return;
    }
    const { sums } = this;
    const [pg, entropy, kl, clippedCount, ref] = v.sums;
    this.steps += 1;
    this.streak.finite();
    sums.pg += pg;
    sums.entropy += entropy;
    sums.kl += kl;
    sums.clipped += clippedCount;
    sums.ref += ref;
    sums.tokens += tokens;
    sums.norm += v.norm;
  }

  /** The update's diagnostics (`withReference`: a reference pass ran; `start`: when it began). */
  diagnostics(withReference: boolean, start: number): GroupUpdateDiagnostics {
    const { sums, steps } = this;
    const perToken = (x: number) => (sums.tokens > 0 ? x / sums.tokens : Number.NaN);
    const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
    return {
      policyLoss: perToken(sums.pg),
      entropy: perToken(sums.entropy),
      approxKl: perToken(sums.kl),
      clipFraction: perToken(sums.clipped),
      klToReference: withReference ? perToken(sums.ref) : Number.NaN,
      actorGradNorm: steps > 0 ? sums.norm / steps : Number.NaN,
      minibatches: this.minibatches,
      nonFiniteSkips: this.streak.skips,
      nonFiniteStreak: this.streak.length,
      actorSteps: steps,
      seconds,
      tokensPerSec: this.tokensSeen / seconds,
    };
  }
}
