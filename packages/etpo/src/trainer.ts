import { isResolved } from '@poad/config';
import {
  type Adam,
  type AdamState,
  adamFromConfig,
  continueRollout,
  type RngState,
  type RolloutBuffer,
  type RolloutResult,
  type RolloutStats,
  type StateLayout,
  type TensorData,
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
import {
  allFinite,
  disposeGradients,
  type EtpoMinibatch,
  EtpoTotals,
  minibatchGradients,
  minibatchOf,
  readValues,
  stepBoth,
} from './minibatch.js';
import type { EtpoPolicy } from './policy.js';
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

  /**
   * `epochs` passes over a fresh seeded permutation of the rollout's actions, cut into
   * `numMinibatches` minibatches; each takes a critic step, the target critic's Polyak step and an
   * actor step (see {@link minibatchStep}).
   */
  protected async update(
    rollout: RolloutResult,
    targets: Float64Array,
  ): Promise<EtpoUpdateDiagnostics> {
    const started = performance.now();
    const { config } = this;
    const { buffer } = rollout;
    const size = buffer.size;
    const mbSize = Math.max(1, Math.floor(size / config.numMinibatches));
    const totals = new EtpoTotals(this.nonFiniteStreak, config.maxNonFiniteSkips);
    for (let epoch = 0; epoch < config.epochs; epoch++) {
      const perm = this.rng.permutation(size);
      for (let mb = 0; mb < config.numMinibatches && mb * mbSize < size; mb++) {
        const idx = Array.from(perm.subarray(mb * mbSize, Math.min(size, (mb + 1) * mbSize)));
        const minibatch = minibatchOf(buffer, targets, idx, config.tokenSpace);
        await this.minibatchStep(minibatch, totals, `epoch ${epoch + 1}, minibatch ${mb + 1}`);
      }
    }
    return totals.diagnostics(started);
  }

  /**
   * One minibatch: both sides' gradients, one read, then the critic, Polyak and actor steps when
   * the losses and norms read are finite; otherwise none, and the non-finite streak grows (at
   * `maxNonFiniteSkips` it throws `NonFiniteUpdateError`, `where` naming the minibatch).
   */
  private async minibatchStep(
    minibatch: EtpoMinibatch,
    totals: EtpoTotals,
    where: string,
  ): Promise<void> {
    const { config, policy } = this;
    totals.seen(minibatch.y.length);
    const chosen = tf.tensor1d(minibatch.chosenIds, 'int32');
    const yT = tf.tensor1d(minibatch.y);
    try {
      const g = minibatchGradients(policy, minibatch, chosen, yT, config);
      const v = await readValues(g);
      const finite = allFinite(v);
      if (finite) {
        stepBoth(g, v, {
          policy,
          critic: this.criticOptimizer,
          actor: this.actorOptimizer,
          config,
        });
      }
      disposeGradients(g);
      if (!finite) {
        totals.skipped(
          () =>
            `${where}: critic loss ${v.criticLoss}, critic gradient norm ${v.criticNorm}, policy loss ${v.policyLoss}, actor gradient norm ${v.actorNorm}`,
        );
        return;
      }
      totals.add(v, minibatch.y);
    } finally {
      tf.dispose([chosen, yT]);
    }
  }
}
