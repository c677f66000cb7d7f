import { isResolved } from '@poad/config';
import {
  type Adam,
  type AdamState,
  adamFromConfig,
  allowedTokenSets,
  continueRollout,
  explainedVariance,
  gradNorm,
  NonFiniteUpdateError,
  type RngState,
  type RolloutBuffer,
  type RolloutResult,
  type RolloutStats,
  type StateLayout,
  type TensorData,
  type TokenBatch,
  TrainerBase,
  type TrainerCounters,
  type UpdateDiagnostics,
  type UpdateStats,
  type VecEnvLike,
} from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { type EtpoConfig, resolveEtpoConfig } from './config.js';
import { EtpoArgumentError } from './errors.js';
import { Lion, type LionState } from './lion.js';
import { etpoCriticLoss, etpoPolicyLoss, etpoReleasedPolicyLoss } from './losses.js';
import type { EtpoPolicy } from './policy.js';
import { polyakUpdate } from './polyak.js';
import { policyTerms } from './reference.js';
import { flatAllowed, restrictScores } from './restrict.js';
import { softBadTargets } from './targets.js';

/** What one update did (`@poad/ppo`'s diagnostics where the quantity is the same). */
export interface EtpoUpdateDiagnostics
  extends UpdateStats,
    Pick<UpdateDiagnostics, 'criticGradNorm'> {
  /**
   * Mean policy loss over tokens, before each actor step: Σ π(β·log(π/π̄) − Q) (`policyLoss:
   * 'objective'`) or mean_w(β·log π − Q) (`'released'`).
   */
  policyLoss: number;
  /** Mean critic loss ½(Q(chosen) − y)² over tokens, before each critic step. */
  valueLoss: number;
  /** Mean entropy of π over the vocabulary at the action tokens. */
  entropy: number;
  /** Mean KL(π ‖ π̄) at the action tokens. */
  klToReference: number;
  /** Explained variance of the soft-BAD targets by the online Q at the chosen tokens. */
  explainedVariance: number;
}

/** One ETPO iteration. */
export interface EtpoIterationReport {
  readonly iteration: number;
  readonly rollout: RolloutStats;
  readonly update: EtpoUpdateDiagnostics;
  readonly buffer: RolloutBuffer;
  /** The soft-BAD critic targets of every token (aligned with the buffer's action ids). */
  readonly targets: Float64Array;
}

/** A checkpoint of an {@link EtpoTrainer} as plain data. */
export interface EtpoCheckpoint {
  format: 'poad-etpo-checkpoint';
  version: 1;
  actorWeights: TensorData[];
  criticWeights: TensorData[];
  targetWeights: TensorData[];
  optimizer: 'adamw' | 'lion';
  actorOptimizer: AdamState | LionState;
  criticOptimizer: AdamState | LionState;
  rng: RngState;
  counters: TrainerCounters;
  nonFiniteStreak: number;
}

/** Options of {@link EtpoTrainer}. */
export interface EtpoTrainerOptions {
  policy: EtpoPolicy;
  env: VecEnvLike;
  /** Configuration: `resolveEtpoConfig(…)`'s result, or fields over the schema's defaults. */
  config?: Partial<EtpoConfig>;
}

/**
 * ETPO on token trajectories: each iteration collects a rollout with `@poad/ppo`'s collector
 * (the policy records soft values under the target critic), turns them into soft-BAD targets
 * (`softBad` of `@poad/bellman`), then for `epochs` × `numMinibatches` minibatches of actions takes
 * a critic step on ½(Q(chosen token) − y)², a Polyak step of the target critic, and an actor step on
 * Σ_w π(w)·(β·log(π(w)/π̄(w)) − Q(w)) (gradient through π only; `policyLoss: 'released'`: the
 * mean over the token space of β·log π(w) − Q(w) instead). AdamW for both, as `@poad/ppo`.
 */
export class EtpoTrainer extends TrainerBase<{
  config: EtpoConfig;
  policy: EtpoPolicy;
  env: VecEnvLike;
  rollout: RolloutResult;
  advantages: Float64Array;
  update: EtpoUpdateDiagnostics;
  report: EtpoIterationReport;
  checkpoint: EtpoCheckpoint;
}> {
  readonly actorOptimizer: Adam | Lion;
  readonly criticOptimizer: Adam | Lion;

  constructor(o: EtpoTrainerOptions) {
    // A run's config arrives resolved and is taken as it is; a partial one is resolved here, once.
    super(
      isResolved(o.config) ? (o.config as EtpoConfig) : resolveEtpoConfig(o.config),
      o.policy,
      o.env,
    );
    const target = o.policy.targetVariables;
    const critic = o.policy.criticVariables;
    if (
      target.length !== critic.length ||
      target.some((t, i) => t.shape.join() !== critic[i]!.shape.join())
    ) {
      throw new EtpoArgumentError(
        'policy.targetVariables',
        'expected the same number, order and shapes as policy.criticVariables',
      );
    }
    const scale = o.policy.criticScale ?? 1;
    if (scale !== this.config.criticScale) {
      throw new EtpoArgumentError(
        'policy.criticScale',
        `the policy scales its critic by ${scale}, the config asks for ${this.config.criticScale}; build the policy with the config's criticScale`,
      );
    }
    const c = this.config;
    const make = (vars: readonly tf.Variable[], lr: number) =>
      c.optimizer === 'lion'
        ? new Lion(vars, { lr, weightDecay: c.weightDecay })
        : adamFromConfig(vars, c, lr);
    this.actorOptimizer = make(o.policy.actorVariables, this.config.lr);
    this.criticOptimizer = make(critic, this.config.criticLr);
  }

  protected collect(): Promise<RolloutResult> {
    return continueRollout(this);
  }

  /** The soft-BAD critic targets of every token (`softBad` of `@poad/bellman`). */
  protected advantagesOf(rollout: RolloutResult): Float64Array {
    return softBadTargets(rollout.buffer, this.config);
  }

  protected reportOf(d: {
    iteration: number;
    rollout: RolloutResult;
    advantages: Float64Array;
    update: EtpoUpdateDiagnostics;
  }): EtpoIterationReport {
    const { iteration, rollout, update } = d;
    return {
      iteration,
      rollout: rollout.stats,
      update,
      buffer: rollout.buffer,
      targets: d.advantages,
    };
  }

  protected layout(): StateLayout {
    return {
      format: 'poad-etpo-checkpoint',
      identity: { optimizer: this.config.optimizer },
      // Checkpoints from before the option existed were trained with AdamW.
      identityDefaults: { optimizer: 'adamw' },
      weights: {
        actor: this.policy.actorVariables,
        critic: this.policy.criticVariables,
        target: this.policy.targetVariables,
      },
      optimizers: { actor: this.actorOptimizer, critic: this.criticOptimizer },
      keepsStreak: true,
    };
  }

  protected async update(
    rollout: RolloutResult,
    targets: Float64Array,
  ): Promise<EtpoUpdateDiagnostics> {
    const started = performance.now();
    const { config, policy } = this;
    const { buffer } = rollout;
    const { beta, tau } = config;
    const size = buffer.size;
    const mbSize = Math.max(1, Math.floor(size / config.numMinibatches));
    const sums = { policy: 0, value: 0, entropy: 0, kl: 0, tokens: 0, actorNorm: 0, criticNorm: 0 };
    const predicted: number[] = [];
    const observed: number[] = [];
    let minibatches = 0;
    let actorSteps = 0;
    let nonFiniteSkips = 0;
    let tokensSeen = 0;
    for (let epoch = 0; epoch < config.epochs; epoch++) {
      const perm = this.rng.permutation(size);
      for (let mb = 0; mb < config.numMinibatches && mb * mbSize < size; mb++) {
        const idx = Array.from(perm.subarray(mb * mbSize, Math.min(size, (mb + 1) * mbSize)));
        const batch: TokenBatch = {
          prompts: idx.map((i) => buffer.prompt(i)),
          actions: idx.map((i) => buffer.action(i)),
          width: Math.max(...idx.map((i) => buffer.actionLength(i))),
        };
        // The label-restricted token space: π and π̄ renormalised over each position's labels.
        const allowed =
          config.tokenSpace === 'labels' ? flatAllowed(allowedTokenSets(buffer, idx)) : null;
        const chosenIds: number[] = [];
        const y: number[] = [];
        for (const i of idx)
          for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++) {
            chosenIds.push(buffer.actionIds[k]!);
            y.push(targets[k]!);
          }
        const tokens = y.length;
        tokensSeen += tokens;
        minibatches += 1;
        const chosen = tf.tensor1d(chosenIds, 'int32');
        const yT = tf.tensor1d(y);
        try {
          // Critic: ½(Q(chosen) − y)², then the target critic's Polyak step. Both gradients are
          // computed before either step (the actor's Q is the critic's before its step), so the
          // minibatch reads once: losses, norms, entropy, KL and the picked Q together.
          let picked: tf.Tensor | null = null;
          const critic = tf.variableGrads(() => {
            const q = policy.criticQ(batch);
            picked = tf.keep(tf.sum(tf.mul(q, tf.oneHot(chosen, q.shape[1])), 1));
            return etpoCriticLoss(q, chosen, yT);
          }, policy.criticVariables as tf.Variable[]);
          const cGrads = policy.criticVariables.map((v) => critic.grads[v.name] ?? null);
          const cNormT = gradNorm(cGrads);
          // Actor: Σ π(β·log(π/π̄) − Q) or (released) mean_w(β·log π − Q), Q held constant.
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
          const aNormT = gradNorm(aGrads);
          // Both are set when their gradients are taken, which always runs the function.
          const pickedQ = picked as unknown as tf.Tensor;
          const statsT = stats as unknown as tf.Tensor;
          const read = await readOnce([critic.value, cNormT, actor.value, aNormT, statsT, pickedQ]);
          tf.dispose([pickedQ, statsT]);
          const [criticLoss, cNormValue, policyLoss, aNormValue, entropy, kl] = Array.from(
            read.subarray(0, 6),
          ) as [number, number, number, number, number, number];
          const q = read.subarray(6);
          const cNorm = { tensor: cNormT, value: cNormValue };
          const aNorm = { tensor: aNormT, value: aNormValue };
          const finite = [criticLoss, cNorm.value, policyLoss, aNorm.value].every(Number.isFinite);
          if (finite) {
            // A fused optimiser clips with the norm still on the device; others with the one read.
            const c = this.criticOptimizer;
            const a = this.actorOptimizer;
            c.step(cGrads, {
              norm: c.fused ? cNorm.tensor : cNorm.value,
              maxNorm: config.criticMaxGradNorm,
            });
            polyakUpdate(policy.targetVariables, policy.criticVariables, tau);
            a.step(aGrads, {
              norm: a.fused ? aNorm.tensor : aNorm.value,
              maxNorm: config.maxGradNorm,
            });
            actorSteps += 1;
            this.nonFiniteStreak = 0;
          } else {
            nonFiniteSkips += 1;
            this.nonFiniteStreak += 1;
          }
          tf.dispose([
            critic.value,
            actor.value,
            ...Object.values(critic.grads),
            ...Object.values(actor.grads),
          ]);
          tf.dispose([cNorm.tensor, aNorm.tensor]);
          if (!finite) {
            if (this.nonFiniteStreak >= config.maxNonFiniteSkips) {
              throw new NonFiniteUpdateError(
                this.nonFiniteStreak,
                `epoch ${epoch + 1}, minibatch ${mb + 1}: critic loss ${criticLoss}, critic gradient norm ${cNorm.value}, policy loss ${policyLoss}, actor gradient norm ${aNorm.value}`,
              );
            }
            continue;
          }
          sums.policy += policyLoss * tokens;
          sums.value += criticLoss * tokens;
          sums.entropy += entropy * tokens;
          sums.kl += kl * tokens;
          sums.tokens += tokens;
          sums.actorNorm += aNorm.value;
          sums.criticNorm += cNorm.value;
          for (let j = 0; j < tokens; j++) {
            predicted.push(q[j]!);
            observed.push(y[j]!);
          }
        } finally {
          tf.dispose([chosen, yT]);
        }
      }
    }
    const steps = Math.max(1, actorSteps);
    const perToken = (x: number) => (sums.tokens > 0 ? x / sums.tokens : Number.NaN);
    const seconds = (performance.now() - started) / 1000;
    return {
      policyLoss: perToken(sums.policy),
      valueLoss: perToken(sums.value),
      entropy: perToken(sums.entropy),
      klToReference: perToken(sums.kl),
      explainedVariance: explainedVariance(observed, predicted),
      actorGradNorm: sums.actorNorm / steps,
      criticGradNorm: sums.criticNorm / steps,
      minibatches,
      nonFiniteSkips,
      nonFiniteStreak: this.nonFiniteStreak,
      actorSteps,
      seconds,
      tokensPerSec: seconds > 0 ? tokensSeen / seconds : 0,
    };
  }
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
