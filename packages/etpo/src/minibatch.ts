import {
  type Adam,
  allowedTokenSets,
  explainedVariance,
  gradNorm,
  NonFiniteStreak,
  type RolloutBuffer,
  type TokenBatch,
} from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import type { EtpoConfig } from './config.js';
import type { Lion } from './lion.js';
import { etpoCriticLoss, etpoPolicyLoss, etpoReleasedPolicyLoss } from './losses.js';
import type { EtpoPolicy } from './policy.js';
import { polyakUpdate } from './polyak.js';
import { policyTerms } from './reference.js';
import { flatAllowed, restrictScores } from './restrict.js';
import type { EtpoUpdateDiagnostics } from './trainer.js';

/** One minibatch of actions, as the update's losses take it. */
export interface EtpoMinibatch {
  readonly batch: TokenBatch;
  /**
   * `tokenSpace: 'labels'`: the labels each action token may take, one set per token (π and π̄
   * are renormalised over them); null on the full vocabulary.
   */
  readonly allowed: Int32Array[] | null;
  /** The chosen token ids of every action, in buffer order. */
  readonly chosenIds: number[];
  /** The soft-BAD target of each of those tokens. */
  readonly y: number[];
}

/** The samples `idx` of `buffer` as a minibatch, with their tokens' targets. */
export function minibatchOf(
  buffer: RolloutBuffer,
  targets: Float64Array,
  idx: readonly number[],
  tokenSpace: EtpoConfig['tokenSpace'],
): EtpoMinibatch {
  const batch: TokenBatch = {
    prompts: idx.map((i) => buffer.prompt(i)),
    actions: idx.map((i) => buffer.action(i)),
    width: Math.max(...idx.map((i) => buffer.actionLength(i))),
  };
  // The label-restricted token space: π and π̄ renormalised over each position's labels.
  const allowed = tokenSpace === 'labels' ? flatAllowed(allowedTokenSets(buffer, idx)) : null;
  const chosenIds: number[] = [];
  const y: number[] = [];
  for (const i of idx)
    for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++) {
      chosenIds.push(buffer.actionIds[k]!);
      y.push(targets[k]!);
    }
  return { batch, allowed, chosenIds, y };
}

/** One side's loss, its gradients and their global norm, all on the device. */
interface SideGradients {
  readonly loss: tf.Scalar;
  /** `tf.variableGrads`' map, which owns the gradients. */
  readonly named: tf.NamedTensorMap;
  /** The gradient of each of the side's variables in order, null where it has none. */
  readonly grads: (tf.Tensor | null)[];
  readonly norm: tf.Scalar;
}

/** Both sides' gradients of one minibatch and the statistics read with them. */
export interface MinibatchGradients {
  readonly critic: SideGradients;
  readonly actor: SideGradients;
  /** Q(chosen token) of every token, by the critic before its step. */
  readonly picked: tf.Tensor;
  /** `[entropy, KL(π ‖ π̄)]`, means over the tokens. */
  readonly stats: tf.Tensor;
}

/**
 * The critic's gradients of ½(Q(chosen) − y)² and the actor's of Σ π(β·log(π/π̄) − Q) (or, with
 * `policyLoss: 'released'`, mean_w(β·log π − Q)), Q held constant, with their norms. Both are
 * computed before either step (the actor's Q is the critic's before its step), so the minibatch
 * reads once: losses, norms, entropy, KL and the picked Q together.
 */
export function minibatchGradients(
  policy: EtpoPolicy,
  mb: EtpoMinibatch,
  chosen: tf.Tensor1D,
  yT: tf.Tensor1D,
  config: Pick<EtpoConfig, 'beta' | 'policyLoss'>,
): MinibatchGradients {
  const { batch, allowed } = mb;
  const { beta } = config;
  let picked: tf.Tensor | null = null;
  const critic = tf.variableGrads(() => {
    const q = policy.criticQ(batch);
    picked = tf.keep(tf.sum(tf.mul(q, tf.oneHot(chosen, q.shape[1])), 1));
    return etpoCriticLoss(q, chosen, yT);
  }, policy.criticVariables as tf.Variable[]);
  const cGrads = policy.criticVariables.map((v) => critic.grads[v.name] ?? null);
  const cNorm = gradNorm(cGrads);
  let stats: tf.Tensor | null = null;
  const actor = tf.variableGrads(() => {
    const raw = policy.vocabularyScores(batch);
    const s = allowed ? restrictScores(raw, allowed) : raw;
    const { pi, logPi, logRatio } = policyTerms(s.policyLogits, s.q, s.reference, beta);
    const entropy = tf.neg(tf.mean(tf.sum(tf.mul(pi, logPi), 1)));
    const kl = tf.mean(tf.sum(tf.mul(pi, logRatio), 1));
    stats = tf.keep(tf.stack([entropy, kl]));
    return config.policyLoss === 'released'
      ? etpoReleasedPolicyLoss(
          s.policyLogits,
          s.q,
          s.reference,
          beta,
          undefined,
          allowed ?? undefined,
        )
      : etpoPolicyLoss(s.policyLogits, s.q, s.reference, beta);
  }, policy.actorVariables as tf.Variable[]);
  const aGrads = policy.actorVariables.map((v) => actor.grads[v.name] ?? null);
  const aNorm = gradNorm(aGrads);
  return {
    critic: { loss: critic.value, named: critic.grads, grads: cGrads, norm: cNorm },
    actor: { loss: actor.value, named: actor.grads, grads: aGrads, norm: aNorm },
    // Both are set when their gradients are taken, which always runs the function.
    picked: picked as unknown as tf.Tensor,
    stats: stats as unknown as tf.Tensor,
  };
}

/** What one minibatch's read brought back. */
export interface MinibatchValues {
  readonly criticLoss: number;
  readonly criticNorm: number;
  readonly policyLoss: number;
  readonly actorNorm: number;
  readonly entropy: number;
  readonly kl: number;
  /** Q(chosen token) of every token. */
  readonly q: Float32Array;
}

/** The minibatch's values, by one read from the device (`picked` and `stats` are disposed). */
export async function readValues(g: MinibatchGradients): Promise<MinibatchValues> {
  const read = await readOnce([
    g.critic.loss,
    g.critic.norm,
    g.actor.loss,
    g.actor.norm,
    g.stats,
    g.picked,
  ]);
  tf.dispose([g.picked, g.stats]);
  const [criticLoss, criticNorm, policyLoss, actorNorm, entropy, kl] = Array.from(
    read.subarray(0, 6),
  ) as [number, number, number, number, number, number];
  return { criticLoss, criticNorm, policyLoss, actorNorm, entropy, kl, q: read.subarray(6) };
}

/** Whether the losses and gradient norms read are finite, so that both sides may step. */
export function allFinite(v: MinibatchValues): boolean {
  return [v.criticLoss, v.criticNorm, v.policyLoss, v.actorNorm].every(Number.isFinite);
}

/**
 * The critic's step, the target critic's Polyak step towards it, then the actor's step, each
 * clipped to its max norm: a fused optimiser clips with the norm still on the device, others
 * with the one read.
 */
export function stepBoth(
  g: MinibatchGradients,
  v: MinibatchValues,
  o: {
    readonly policy: EtpoPolicy;
    readonly critic: Adam | Lion;
    readonly actor: Adam | Lion;
    readonly config: Pick<EtpoConfig, 'tau' | 'criticMaxGradNorm' | 'maxGradNorm'>;
  },
): void {
  const { policy, critic, actor, config } = o;
  critic.step(g.critic.grads, {
    norm: critic.fused ? g.critic.norm : v.criticNorm,
    maxNorm: config.criticMaxGradNorm,
  });
  polyakUpdate(policy.targetVariables, policy.criticVariables, config.tau);
  actor.step(g.actor.grads, {
    norm: actor.fused ? g.actor.norm : v.actorNorm,
    maxNorm: config.maxGradNorm,
  });
}

/** Disposes both sides' losses, gradients and norms. */
export function disposeGradients(g: MinibatchGradients): void {
  tf.dispose([
    g.critic.loss,
    g.actor.loss,
    ...Object.values(g.critic.named),
    ...Object.values(g.actor.named),
  ]);
  tf.dispose([g.critic.norm, g.actor.norm]);
}

/**
 * The values of `tensors` (scalars and vectors) in order, flattened into one array by one read
 * from the device (the inputs stay with the caller).
 */
async function readOnce(tensors: readonly tf.Tensor[]): Promise<Float32Array> {
  const flat = tf.tidy(() => tf.concat(tensors.map((t) => tf.reshape(t, [-1]))));
  const values = Float32Array.from((await flat.data()) as Float32Array);
  flat.dispose();
  return values;
}

/**
 * What an update's minibatches add up to: token-weighted loss, entropy and KL sums over the
 * minibatches that stepped, their gradient norms, the picked Q against the targets (for the
 * explained variance) and the counts.
 */
export class EtpoTotals {
  private readonly sums = {
    policy: 0,
    value: 0,
    entropy: 0,
    kl: 0,
    tokens: 0,
    actorNorm: 0,
    criticNorm: 0,
  };
  private readonly predicted: number[] = [];
  private readonly observed: number[] = [];
  private minibatches = 0;
  private actorSteps = 0;
  private tokensSeen = 0;
  private readonly streak: NonFiniteStreak;

  /** `streak`: the non-finite streak the previous update ended with; `limit`: `maxNonFiniteSkips`. */
  constructor(streak: number, limit: number) {
    this.streak = new NonFiniteStreak(streak, limit);
  }

  /** Counts a minibatch of `tokens` tokens, whether it steps or not. */
  seen(tokens: number): void {
    this.tokensSeen += tokens;
    this.minibatches += 1;
  }

  /**
   * Counts a minibatch skipped for values that were not finite; `detail` names it for the error.
   * @throws NonFiniteUpdateError when that makes `maxNonFiniteSkips` in a row.
   */
  skipped(detail: () => string): void {
    this.streak.skipped(detail);
  }

  /** Adds a minibatch that stepped: its values and its tokens' targets `y`. */
  add(v: MinibatchValues, y: readonly number[]): void {
    const { sums } = this;
    const tokens = y.length;
    this.streak.finite();
    this.actorSteps += 1;
    sums.policy += v.policyLoss * tokens;
    sums.value += v.criticLoss * tokens;
    sums.entropy += v.entropy * tokens;
    sums.kl += v.kl * tokens;
    sums.tokens += tokens;
    sums.actorNorm += v.actorNorm;
    sums.criticNorm += v.criticNorm;
    for (let j = 0; j < tokens; j++) {
      this.predicted.push(v.q[j]!);
      this.observed.push(y[j]!);
    }
  }

  /** The update's diagnostics; `started` is when it began (`performance.now()`). */
  diagnostics(started: number): EtpoUpdateDiagnostics {
    const { sums, actorSteps, tokensSeen } = this;
    const steps = Math.max(1, actorSteps);
    const perToken = (x: number) => (sums.tokens > 0 ? x / sums.tokens : Number.NaN);
    const seconds = (performance.now() - started) / 1000;
    return {
      policyLoss: perToken(sums.policy),
      valueLoss: perToken(sums.value),
      entropy: perToken(sums.entropy),
      klToReference: perToken(sums.kl),
      explainedVariance: explainedVariance(this.observed, this.predicted),
      actorGradNorm: sums.actorNorm / steps,
      criticGradNorm: sums.criticNorm / steps,
      minibatches: this.minibatches,
      nonFiniteSkips: this.streak.skips,
      nonFiniteStreak: this.streak.length,
      actorSteps,
      seconds,
      tokensPerSec: seconds > 0 ? tokensSeen / seconds : 0,
    };
  }
}
