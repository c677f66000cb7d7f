import { Adam } from './adam.js';
import { type Advantages, computeAdvantages } from './advantages.js';
import type { TrainerCheckpoint } from './checkpoint.js';
import { continueRollout, type RolloutResult, type RolloutStats } from './collect-rollout.js';
import { type PpoConfig, resolveConfig } from './config.js';
import type { UpdateDiagnostics } from './diagnostics.js';
import type { TokenPolicy } from './policy.js';
import { ppoUpdate } from './ppo-update.js';
import type { RolloutBuffer } from './rollout-buffer.js';
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

  constructor(options: PpoTrainerOptions) {
    super(resolveConfig(options.config), options.policy, options.env);
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
  }

  protected collect(): Promise<RolloutResult> {
    return continueRollout(this);
  }

  protected advantagesOf(rollout: RolloutResult): Advantages {
    return computeAdvantages(rollout.buffer, this.config);
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
    return ppoUpdate({
      policy: this.policy,
      buffer: b,
      advantages,
      config: this.config,
      rng: this.rng,
      actorOptimizer: this.actorOptimizer,
      criticOptimizer: this.criticOptimizer,
      nonFiniteStreak: this.nonFiniteStreak,
    });
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
      weights: { actor: this.policy.actorVariables, critic: this.policy.criticVariables },
      optimizers: { actor: this.actorOptimizer, critic: this.criticOptimizer },
      keepsStreak: false,
    };
  }
}
