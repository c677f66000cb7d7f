import type { TextStep } from '@poad/envs-core';
import {
  Adam,
  type AdamState,
  NonFiniteUpdateError,
  type RngState,
  type RolloutBuffer,
  type RolloutStats,
  readVariables,
  SeededRng,
  type TensorData,
  type TrainerCounters,
  writeVariables,
} from '@poad/ppo';
import { type GroupConfig, resolveGroupConfig } from './config.js';
import { GroupConfigError } from './errors.js';
import { type GroupAdvantages, groupAdvantages } from './group-advantages.js';
import { collectGroupRollout, type GroupEnvLike, type GroupEpisode } from './group-rollout.js';
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
export class GroupTrainer {
  readonly policy: GroupPolicy;
  readonly env: GroupEnvLike;
  readonly config: GroupConfig;
  readonly rng: SeededRng;
  readonly optimizer: Adam;
  counters: TrainerCounters = { iterations: 0, envSteps: 0, actorUpdates: 0 };
  /** Unused between iterations (each starts its own episodes); kept for the run loop's interface. */
  steps: TextStep[] | null = null;
  private nonFiniteStreak = 0;

  constructor(o: GroupTrainerOptions) {
    this.config = resolveGroupConfig(o.config);
    this.policy = o.policy;
    this.env = o.env;
    if (this.policy.actorVariables.length === 0)
      throw new GroupConfigError(
        'policy.actorVariables',
        'expected at least one trainable variable',
      );
    this.rng = new SeededRng(this.config.seed);
    const c = this.config;
    this.optimizer = new Adam(this.policy.actorVariables, {
      lr: c.lr,
      beta1: c.adamBeta1,
      beta2: c.adamBeta2,
      eps: c.adamEps,
      weightDecay: c.weightDecay,
    });
  }

  /**
   * One group rollout and one update.
   * @throws NonFiniteUpdateError (with the iteration) after `maxNonFiniteSkips` non-finite
   *   minibatches in a row.
   */
  async iterate(): Promise<GroupIterationReport> {
    const rollout = await collectGroupRollout({
      policy: this.policy,
      env: this.env,
      config: this.config,
      rng: this.rng,
    });
    const advantages = groupAdvantages(rollout.episodes, rollout.buffer.size, this.config);
    // The reference policy's log-probs are read for the update.
    this.policy.enterPhase?.('update');
    const reference = await referenceLogProbs(this.policy, rollout.buffer, this.config);
    let update: GroupUpdateDiagnostics;
    try {
      update = await groupUpdate({
        policy: this.policy,
        buffer: rollout.buffer,
        advantages: advantages.perSample,
        reference,
        config: this.config,
        rng: this.rng,
        optimizer: this.optimizer,
        nonFiniteStreak: this.nonFiniteStreak,
      });
    } catch (e) {
      if (e instanceof NonFiniteUpdateError)
        throw new NonFiniteUpdateError(e.streak, e.detail, this.counters.iterations + 1);
      throw e;
    }
    this.nonFiniteStreak = update.nonFiniteStreak;
    this.counters = {
      iterations: this.counters.iterations + 1,
      envSteps: this.counters.envSteps + rollout.stats.envSteps,
      actorUpdates: this.counters.actorUpdates + update.actorSteps,
    };
    return {
      iteration: this.counters.iterations,
      rollout: rollout.stats,
      update,
      buffer: rollout.buffer,
      episodes: rollout.episodes,
      advantages,
    };
  }

  /** A checkpoint as plain data (the actor's weights, AdamW, the generator, the counters). */
  async getState(): Promise<GroupCheckpoint> {
    return {
      format: 'poad-group-checkpoint',
      version: 1,
      estimator: this.config.estimator,
      actorWeights: await readVariables(this.policy.actorVariables),
      actorOptimizer: await this.optimizer.getState(),
      rng: this.rng.getState(),
      counters: { ...this.counters },
      nonFiniteStreak: this.nonFiniteStreak,
    };
  }

  /** Restores a checkpoint of {@link getState}; checks everything before writing anything. */
  setState(state: GroupCheckpoint): void {
    if (state?.format !== 'poad-group-checkpoint' || state.version !== 1)
      throw new GroupConfigError(
        'state',
        'expected a checkpoint written by GroupTrainer.getState (format poad-group-checkpoint, version 1)',
      );
    if (state.estimator !== this.config.estimator)
      throw new GroupConfigError(
        'state.estimator',
        `the checkpoint was trained with ${state.estimator}, this trainer runs ${this.config.estimator}`,
      );
    const sizes = this.policy.actorVariables.map((v) => v.size).join(',');
    if (state.actorWeights.map((w) => w.data.length).join(',') !== sizes)
      throw new GroupConfigError('state.actorWeights', `sizes differ from the policy's (${sizes})`);
    writeVariables(this.policy.actorVariables, state.actorWeights, 'actorWeights');
    this.optimizer.setState(state.actorOptimizer);
    this.rng.setState(state.rng);
    this.counters = { ...state.counters };
    this.nonFiniteStreak = state.nonFiniteStreak;
    this.steps = null;
  }

  /** Frees the optimiser's moments (the policy's variables belong to the policy). */
  dispose(): void {
    this.optimizer.dispose();
  }
}
