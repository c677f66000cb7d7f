import { isResolved } from '@poad/config';
import { Adam } from './adam.js';
import { type Advantages, computeAdvantages } from './advantages.js';
import type { TrainerCheckpoint } from './checkpoint.js';
import { continueRollout, type RolloutResult, type RolloutStats } from './collect-rollout.js';
import { type PpoConfig, resolveConfig } from './config.js';
import type { UpdateDiagnostics } from './diagnostics.js';
import type { TokenPolicy } from './policy.js';
import { ppoUpdate } from './ppo-update.js';
import type { RolloutBuffer } from './rollout-buffer.js';
import { TargetCritic } from './target-critic.js';
import { requireTrainable, type StateLayout, TrainerBase } from './trainer-base.js';
import type { VecEnvLike } from './vec-env-like.js';

/** What one {@link PpoTrainer.iterate} call did. */
export interface IterationReport {
  /** 1-based iteration number. */
  readonly iteration: number;
  /** Rollout counters, throughput and finished episodes. */
  readonly rollout: RolloutStats;
  /** Update diagnostics. */
  readonly update: UpdateDiagnostics;
  /** The rollout learned from (for custom logging, e.g. per-token advantages). */
  readonly buffer: RolloutBuffer;
  /** Its advantages and returns. */
  readonly advantages: Advantages;
}

/** Inputs of {@link PpoTrainer}. */
export interface PpoTrainerOptions {
  /** The policy (actor + critic) to train. */
  readonly policy: TokenPolicy;
  /** The vectorised environment. */
  readonly env: VecEnvLike;
  /**
   * Configuration: `resolveConfig(…)`'s result (used as it is), or fields over the schema's
   * defaults (resolved here, once).
   */
  readonly config?: Partial<PpoConfig>;
}

/**
 * The training loop of POAD, NTPO, ARCHER and TWOSOME, on the shared skeleton
 * ({@link TrainerBase}): rollout (T steps per environment, continuing from the last iteration's
 * observations as in the original runners) → advantages (`@poad/bellman`, {@link computeAdvantages})
 * → PPO update ({@link ppoUpdate}: AdamW on the actor, Adam on the critic).
 *
 * With `targetCriticEvery` N > 0 it keeps a target critic ({@link TargetCritic}, in the
 * checkpoint as `targetWeights`): the rollout also records its values, the returns the critic
 * regresses on are computed from them (the advantages from the critic's own), and after every
 * N-th update it moves towards the critic by `targetCriticTau`. In the first `criticWarmup`
 * iterations the actor takes no step.
 */
export class PpoTrainer extends TrainerBase<{
  config: PpoConfig;
  policy: TokenPolicy;
  env: VecEnvLike;
  rollout: RolloutResult;
  advantages: Advantages;
  update: UpdateDiagnostics;
  report: IterationReport;
  checkpoint: TrainerCheckpoint;
}> {
  /** AdamW over the actor variables. */
  readonly actorOptimizer: Adam;
  /** Adam over the critic variables. */
  readonly criticOptimizer: Adam;
  /** The target critic (`targetCriticEvery` > 0), else null. */
  readonly targetCritic: TargetCritic | null;

  constructor(options: PpoTrainerOptions) {
    // A run's config arrives resolved and is taken as it is; a partial one is resolved here, once.
    super(
      isResolved(options.config) ? (options.config as PpoConfig) : resolveConfig(options.config),
      options.policy,
      options.env,
    );
    requireTrainable('policy.actorVariables', this.policy.actorVariables);
    requireTrainable('policy.criticVariables', this.policy.criticVariables);
    const c = this.config;
    const moments = { beta1: c.adamBeta1, beta2: c.adamBeta2, eps: c.adamEps };
    this.actorOptimizer = new Adam(this.policy.actorVariables, {
      ...moments,
      lr: c.lr,
      weightDecay: c.weightDecay,
    });
    this.criticOptimizer = new Adam(this.policy.criticVariables, { ...moments, lr: c.criticLr });
    this.targetCritic =
      c.targetCriticEvery > 0 ? new TargetCritic(this.policy.criticVariables) : null;
  }

  protected collect(): Promise<RolloutResult> {
    return continueRollout(this);
  }

  /**
   * The advantages of the critic that acted; with a target critic, the returns (the critic's
   * regression targets) are those of the target's values instead.
   */
  protected advantagesOf(rollout: RolloutResult): Advantages {
    const online = computeAdvantages(rollout.buffer, this.config);
    if (!rollout.targetValues) return online;
    const target = computeAdvantages(rollout.buffer, this.config, rollout.targetValues);
    return { ...online, returns: target.returns };
  }

  protected async update(rollout: RolloutResult, advantages: Advantages) {
    const b = rollout.buffer;
    if (this.policy.prepareValues) {
      // TWOSOME's critic values the observation alone; the others every prefix of the action.
      const prompts = Array.from({ length: b.size }, (_, i) => b.prompt(i));
      const actions = Array.from({ length: b.size }, (_, i) =>
        this.config.algorithm === 'twosome' ? new Int32Array(0) : b.action(i),
      );
      await this.policy.prepareValues(prompts, actions);
    }
    const update = await ppoUpdate({
      policy: this.policy,
      buffer: b,
      advantages,
      config: this.config,
      rng: this.rng,
      actorOptimizer: this.actorOptimizer,
      criticOptimizer: this.criticOptimizer,
      nonFiniteStreak: this.nonFiniteStreak,
      // criticWarmup: the first iterations train the critic alone.
      ...(this.counters.iterations < this.config.criticWarmup ? { actorLearns: false } : {}),
    });
    // This is update number iterations + 1: the target critic follows after every N-th.
    const every = this.config.targetCriticEvery;
    if (this.targetCritic && (this.counters.iterations + 1) % every === 0) {
      this.targetCritic.refresh(this.config.targetCriticTau);
    }
    return update;
  }

  protected reportOf(d: {
    iteration: number;
    rollout: RolloutResult;
    advantages: Advantages;
    update: UpdateDiagnostics;
  }): IterationReport {
    const { iteration, rollout, advantages, update } = d;
    return { iteration, rollout: rollout.stats, update, buffer: rollout.buffer, advantages };
  }

  protected layout(): StateLayout {
    return {
      format: 'poad-ppo-checkpoint',
      identity: { algorithm: this.config.algorithm },
      weights: {
        actor: this.policy.actorVariables,
        critic: this.policy.criticVariables,
        // Only when there is one, so that a checkpoint without it is what it was before.
        ...(this.targetCritic ? { target: this.targetCritic.variables } : {}),
      },
      optimizers: { actor: this.actorOptimizer, critic: this.criticOptimizer },
      keepsStreak: false,
    };
  }

  /** Frees the optimisers' moments and the target critic's copy. */
  override dispose(): void {
    super.dispose();
    this.targetCritic?.dispose();
  }
}
