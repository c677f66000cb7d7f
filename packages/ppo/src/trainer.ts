import type { TextStep } from '@poad/envs-core';
import { Adam } from './adam.js';
import { type Advantages, computeAdvantages } from './advantages.js';
import {
  readVariables,
  type TrainerCheckpoint,
  type TrainerCounters,
  writeVariables,
} from './checkpoint.js';
import { collectRollout, type RolloutStats } from './collect-rollout.js';
import { type PpoConfig, resolveConfig } from './config.js';
import type { UpdateDiagnostics } from './diagnostics.js';
import { CheckpointMismatchError, NonFiniteUpdateError, PolicyContractError } from './errors.js';
import type { TokenPolicy } from './policy.js';
import { ppoUpdate } from './ppo-update.js';
import { SeededRng } from './rng.js';
import type { RolloutBuffer } from './rollout-buffer.js';
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
  /** Configuration: `resolveConfig(…)`'s result, or fields over the schema's defaults. */
  readonly config?: Partial<PpoConfig>;
}

/**
 * The training loop of POAD, NTPO, ARCHER and TWOSOME:
 * rollout (T steps) → advantages (`@poad/bellman`) → PPO update, repeated by the app.
 * Environments are never reset between iterations; the next rollout continues from the last
 * observation, as in the original runners.
 */
export class PpoTrainer {
  /** Resolved configuration. */
  readonly config: PpoConfig;
  /** The policy being trained. */
  readonly policy: TokenPolicy;
  /** The environment. */
  readonly env: VecEnvLike;
  /** The seeded generator of every random choice. */
  readonly rng: SeededRng;
  /** AdamW over the actor variables. */
  readonly actorOptimizer: Adam;
  /** Adam over the critic variables. */
  readonly criticOptimizer: Adam;
  /** Step counters. */
  counters: TrainerCounters = { iterations: 0, envSteps: 0, actorUpdates: 0 };
  /** The current step of each environment (`null` until the first reset). */
  steps: TextStep[] | null = null;
  /**
   * Consecutive minibatches skipped for a non-finite loss or gradient norm, carried from one
   * update to the next (see `PpoConfig.maxNonFiniteSkips`); not part of a checkpoint, so it
   * restarts at 0 after `setState`.
   */
  nonFiniteStreak = 0;

  constructor(options: PpoTrainerOptions) {
    this.config = resolveConfig(options.config);
    this.policy = options.policy;
    this.env = options.env;
    if (this.policy.actorVariables.length === 0 || this.policy.criticVariables.length === 0) {
      throw new PolicyContractError(
        'policy.actorVariables/criticVariables',
        'both lists must hold at least one trainable tf.Variable.',
      );
    }
    this.rng = new SeededRng(this.config.seed);
    const shared = {
      beta1: this.config.adamBeta1,
      beta2: this.config.adamBeta2,
      eps: this.config.adamEps,
    };
    this.actorOptimizer = new Adam(this.policy.actorVariables, {
      ...shared,
      lr: this.config.lr,
      weightDecay: this.config.weightDecay,
    });
    this.criticOptimizer = new Adam(this.policy.criticVariables, {
      ...shared,
      lr: this.config.criticLr,
    });
  }

  /**
   * One rollout of `numSteps` steps per environment, then one PPO update.
   * @throws NonFiniteUpdateError (with the iteration) after `maxNonFiniteSkips` consecutive
   *   minibatches with a non-finite loss or gradient norm; the weights are then still finite.
   */
  async iterate(): Promise<IterationReport> {
    if (this.steps === null) this.steps = await this.env.reset();
    const rollout = await collectRollout({
      policy: this.policy,
      env: this.env,
      steps: this.steps,
      config: this.config,
      rng: this.rng,
    });
    this.steps = rollout.nextSteps;
    const advantages = computeAdvantages(rollout.buffer, this.config);
    this.policy.enterPhase?.('update');
    if (this.policy.prepareValues) {
      const b = rollout.buffer;
      const prompts = Array.from({ length: b.size }, (_, i) => b.prompt(i));
      const actions = Array.from({ length: b.size }, (_, i) =>
        this.config.algorithm === 'twosome' ? new Int32Array(0) : b.action(i),
      );
      await this.policy.prepareValues(prompts, actions);
    }
    let update: UpdateDiagnostics;
    try {
      update = await ppoUpdate({
        policy: this.policy,
        buffer: rollout.buffer,
        advantages,
        config: this.config,
        rng: this.rng,
        actorOptimizer: this.actorOptimizer,
        criticOptimizer: this.criticOptimizer,
        nonFiniteStreak: this.nonFiniteStreak,
      });
    } catch (e) {
      if (e instanceof NonFiniteUpdateError) {
        throw new NonFiniteUpdateError(e.streak, e.detail, this.counters.iterations + 1);
      }
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
      advantages,
    };
  }

  /**
   * A checkpoint of the run as plain data. Asynchronous (tensors are read with `data()`, which
   * every backend serves); call it between iterations, the state is the one at the call.
   */
  async getState(): Promise<TrainerCheckpoint> {
    const rng = this.rng.getState();
    const counters = { ...this.counters };
    const [actorWeights, criticWeights, actorOptimizer, criticOptimizer] = await Promise.all([
      readVariables(this.policy.actorVariables),
      readVariables(this.policy.criticVariables),
      this.actorOptimizer.getState(),
      this.criticOptimizer.getState(),
    ]);
    return {
      format: 'poad-ppo-checkpoint',
      version: 1,
      algorithm: this.config.algorithm,
      actorWeights,
      criticWeights,
      actorOptimizer,
      criticOptimizer,
      rng,
      counters,
    };
  }

  /**
   * Restores a checkpoint from {@link PpoTrainer.getState}. Validates everything before
   * writing anything, so a mismatched checkpoint leaves the trainer untouched.
   */
  setState(state: TrainerCheckpoint): void {
    if (state.format !== 'poad-ppo-checkpoint' || state.version !== 1) {
      throw new CheckpointMismatchError(
        `unknown format ${String(state.format)} v${String(state.version)}.`,
      );
    }
    if (state.algorithm !== this.config.algorithm) {
      throw new CheckpointMismatchError(
        `it was saved by '${state.algorithm}', this trainer runs '${this.config.algorithm}'.`,
      );
    }
    const sizes = (vars: readonly { size: number }[]) => vars.map((v) => v.size).join(',');
    const dataSizes = (d: readonly { data: Float32Array }[]) =>
      d.map((x) => x.data.length).join(',');
    if (
      sizes(this.policy.actorVariables) !== dataSizes(state.actorWeights) ||
      sizes(this.policy.criticVariables) !== dataSizes(state.criticWeights) ||
      dataSizes(state.actorWeights) !== state.actorOptimizer.m.map((m) => m.length).join(',') ||
      dataSizes(state.criticWeights) !== state.criticOptimizer.m.map((m) => m.length).join(',')
    ) {
      throw new CheckpointMismatchError('variable or optimiser sizes differ from the policy.');
    }
    writeVariables(this.policy.actorVariables, state.actorWeights, 'actorWeights');
    writeVariables(this.policy.criticVariables, state.criticWeights, 'criticWeights');
    this.actorOptimizer.setState(state.actorOptimizer);
    this.criticOptimizer.setState(state.criticOptimizer);
    this.rng.setState(state.rng);
    this.counters = { ...state.counters };
    this.steps = null;
    this.nonFiniteStreak = 0;
  }

  /** Frees the optimisers' moment variables (not the policy). */
  dispose(): void {
    this.actorOptimizer.dispose();
    this.criticOptimizer.dispose();
  }
}
