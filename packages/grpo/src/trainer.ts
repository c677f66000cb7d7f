import { isResolved } from '@poad/config';
import {
  type Adam,
  type AdamState,
  adamFromConfig,
  type RngState,
  type RolloutBuffer,
  type RolloutStats,
  requireTrainable,
  type StateLayout,
  type TensorData,
  TrainerBase,
  type TrainerCounters,
} from '@poad/ppo';
import { type GroupConfig, resolveGroupConfig } from './config.js';
import { type GroupAdvantages, groupAdvantages } from './group-advantages.js';
import {
  collectGroupRollout,
  type GroupEnvLike,
  type GroupEpisode,
  type GroupRollout,
} from './group-rollout.js';
import { type GroupUpdateDiagnostics, groupUpdate, referenceLogProbs } from './group-update.js';
import type { GroupPolicy } from './policy.js';

/** One iteration of a {@link GroupTrainer}. */
export interface GroupIterationReport {
  readonly iteration: number;
  readonly rollout: RolloutStats;
  readonly update: GroupUpdateDiagnostics;
  /** The steps learned from, episode after episode. */
  readonly buffer: RolloutBuffer;
  readonly episodes: readonly GroupEpisode[];
  readonly advantages: GroupAdvantages;
}

/** A checkpoint of a {@link GroupTrainer} as plain data. */
export interface GroupCheckpoint {
  format: 'poad-group-checkpoint';
  version: 1;
  estimator: GroupConfig['estimator'];
  actorWeights: TensorData[];
  actorOptimizer: AdamState;
  rng: RngState;
  counters: TrainerCounters;
  nonFiniteStreak: number;
}

/** Options of {@link GroupTrainer}. */
export interface GroupTrainerOptions {
  policy: GroupPolicy;
  env: GroupEnvLike;
  /** `resolveGroupConfig(…)`'s result, or fields over the schema's defaults. */
  config?: Partial<GroupConfig>;
}

/**
 * GRPO, RLOO or GiGPO (`config.estimator`) on token trajectories, without a critic: each iteration
 * plays `groups` groups of `groupSize` episodes from one start state per group
 * ({@link collectGroupRollout}), gives every step its group-relative advantage
 * ({@link groupAdvantages}, `@poad/bellman`), then runs the clipped update ({@link groupUpdate})
 * with AdamW on the actor. Every random choice comes from one seeded generator, and a checkpoint
 * holds it, so a resumed run repeats the uninterrupted one: each iteration starts its episodes
 * afresh from seeds that generator draws.
 */
export class GroupTrainer extends TrainerBase<{
  config: GroupConfig;
  policy: GroupPolicy;
  env: GroupEnvLike;
  rollout: GroupRollout;
  advantages: GroupAdvantages;
  update: GroupUpdateDiagnostics;
  report: GroupIterationReport;
  checkpoint: GroupCheckpoint;
}> {
  /** AdamW over the actor variables. */
  readonly optimizer: Adam;

  constructor(o: GroupTrainerOptions) {
    // A run's config arrives resolved and is taken as it is; a partial one is resolved here, once.
    super(
      isResolved(o.config) ? (o.config as GroupConfig) : resolveGroupConfig(o.config),
      o.policy,
      o.env,
    );
    requireTrainable('policy.actorVariables', this.policy.actorVariables);
    const c = this.config;
    this.optimizer = adamFromConfig(this.policy.actorVariables, c, c.lr);
  }

  /** Groups of whole episodes, each group from one start state (no steps carried over). */
  protected collect(): Promise<GroupRollout> {
    return collectGroupRollout({
      policy: this.policy,
      env: this.env,
      config: this.config,
      rng: this.rng,
    });
  }

  protected advantagesOf(rollout: GroupRollout): GroupAdvantages {
    return groupAdvantages(rollout.episodes, rollout.buffer.size, this.config);
  }

  protected async update(
    rollout: GroupRollout,
    advantages: GroupAdvantages,
  ): Promise<GroupUpdateDiagnostics> {
    const reference = await referenceLogProbs(this.policy, rollout.buffer, this.config);
    return groupUpdate({
      policy: this.policy,
      buffer: rollout.buffer,
      advantages: advantages.perSample,
      reference,
      config: this.config,
      rng: this.rng,
      optimizer: this.optimizer,
      nonFiniteStreak: this.nonFiniteStreak,
    });
  }

  protected reportOf(d: {
    iteration: number;
    rollout: GroupRollout;
    advantages: GroupAdvantages;
    update: GroupUpdateDiagnostics;
  }): GroupIterationReport {
    const { iteration, rollout, advantages, update } = d;
    return {
      iteration,
      rollout: rollout.stats,
      update,
      buffer: rollout.buffer,
      episodes: rollout.episodes,
      advantages,
    };
  }

  protected layout(): StateLayout {
    return {
      format: 'poad-group-checkpoint',
      identity: { estimator: this.config.estimator },
      weights: { actor: this.policy.actorVariables },
      optimizers: { actor: this.optimizer },
      keepsStreak: true,
    };
  }
}
