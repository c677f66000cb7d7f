import type { TextStep } from '@poad/envs-core';
import type * as tf from '@tensorflow/tfjs-core';
import {
  checkVariables,
  readVariables,
  type TensorData,
  type TrainerCounters,
  writeVariables,
} from './checkpoint.js';
import type { RolloutStats } from './collect-rollout.js';
import { CheckpointMismatchError, NonFiniteUpdateError, PolicyContractError } from './errors.js';
import type { MomentOptimizer, OptimizerState } from './moment-optimizer.js';
import type { IterationPhase } from './policy.js';
import { type RngState, SeededRng } from './rng.js';
import type { RolloutBuffer } from './rollout-buffer.js';

/** What every trainer's config has: the seed of every random choice and the non-finite guard. */
export interface TrainerBaseConfig {
  /** Seeds the trainer's generator (every sample and minibatch order). */
  readonly seed: number;
  /** Consecutive minibatches with a non-finite loss or gradient norm before the run stops. */
  readonly maxNonFiniteSkips: number;
}

/** What a rollout of any trainer gives the skeleton. */
export interface CollectedRollout {
  /** The steps learned from. */
  readonly buffer: RolloutBuffer;
  /** Counters and throughput (its `envSteps` advance the run's). */
  readonly stats: RolloutStats;
}

/** What an update of any trainer reports to the skeleton. */
export interface UpdateCounts {
  /** Actor optimiser steps taken (skipped minibatches excluded). */
  readonly actorSteps: number;
  /** Non-finite minibatches in a row at the end of the update (carried to the next one). */
  readonly nonFiniteStreak: number;
}

/**
 * What a trainer's checkpoint holds and how its fields are named: `format` and `version`, the
 * `identity` fields (which must match on restore), `<name>Weights` for every weight group,
 * `<name>Optimizer` for every optimiser, `rng`, `counters` and, when `keepsStreak`,
 * `nonFiniteStreak`, in that order.
 */
export interface StateLayout {
  /** The checkpoint's format tag, e.g. `poad-ppo-checkpoint`. */
  readonly format: string;
  /**
   * Fields naming what the trainer runs (e.g. `{ algorithm: 'poad' }`): a checkpoint of another
   * is refused.
   */
  readonly identity: Readonly<Record<string, string>>;
  /** The value an identity field has in checkpoints written before the field existed. */
  readonly identityDefaults?: Readonly<Record<string, string>>;
  /** The trainable variables by group (`actor`, `critic`, `target`, …), as the policy holds them. */
  readonly weights: Readonly<Record<string, readonly tf.Variable[]>>;
  /** The optimisers by name (`actor`, `critic`). */
  readonly optimizers: Readonly<Record<string, MomentOptimizer>>;
  /** Whether the checkpoint keeps the non-finite streak (otherwise a restore sets it to 0). */
  readonly keepsStreak: boolean;
}

/** A checkpoint as the skeleton writes it (the families type theirs precisely). */
type SkeletonCheckpoint = Record<string, unknown> & {
  format: string;
  version: number;
  rng: RngState;
  counters: TrainerCounters;
};

/** The types a trainer family fills in to the skeleton. */
export interface TrainerTypes {
  /** Its resolved config. */
  config: TrainerBaseConfig;
  /** The policy it trains (told when the iteration's phase changes). */
  policy: { enterPhase?(phase: IterationPhase): void };
  /** Its environments. */
  env: unknown;
  /** What its rollout gives. */
  rollout: CollectedRollout;
  /** Its advantages (or targets). */
  advantages: unknown;
  /** What its update reports. */
  update: UpdateCounts;
  /** Its report of an iteration. */
  report: unknown;
  /** Its checkpoint as plain data (as {@link StateLayout} names the fields). */
  checkpoint: object;
}

/**
 * The skeleton every trainer family shares: one iteration is a rollout → advantages (or
 * targets) → an update; the skeleton owns the order, the phase change, the non-finite guard's
 * report, the counters, the seeded generator and the checkpoint as plain data (exact resume).
 * A family writes what differs: {@link collect} (a continuing rollout, or groups of episodes),
 * {@link advantagesOf}, {@link update}, {@link reportOf} and its {@link layout}.
 *
 * `@poad/ppo`'s `PpoTrainer` (POAD, NTPO, ARCHER, TWOSOME), `@poad/etpo`'s `EtpoTrainer` and
 * `@poad/grpo`'s `GroupTrainer` (GRPO, RLOO, GiGPO) are the three.
 */
export abstract class TrainerBase<T extends TrainerTypes> {
  /** The seeded generator of every random choice. */
  readonly rng: SeededRng;
  /** Step counters. */
  counters: TrainerCounters = { iterations: 0, envSteps: 0, actorUpdates: 0 };
  /** The current step of each environment (`null` until the first reset). */
  steps: TextStep[] | null = null;
  /**
   * Consecutive minibatches skipped for a non-finite loss or gradient norm, carried from one
   * update to the next (see `maxNonFiniteSkips`).
   */
  nonFiniteStreak = 0;
  /**
   * What the optimisers' learning rates are multiplied by (1: the config's); a run's collapse
   * monitor cuts it when it rolls back. Kept in the checkpoint when it is not 1.
   */
  lrScale = 1;
  /** The optimisers' learning rates at scale 1, by optimiser, read at the first change. */
  private baseLrs: number[] | null = null;

  protected constructor(
    /** The resolved configuration. */
    readonly config: T['config'],
    /** The policy being trained. */
    readonly policy: T['policy'],
    /** The environments. */
    readonly env: T['env'],
  ) {
    this.rng = new SeededRng(config.seed);
  }

  /** The rollout of one iteration. */
  protected abstract collect(): Promise<T['rollout']>;
  /** Its advantages (or, for a soft critic, its targets). */
  protected abstract advantagesOf(rollout: T['rollout']): T['advantages'];
  /** The update on it; throws `NonFiniteUpdateError` after too many non-finite minibatches. */
  protected abstract update(
    rollout: T['rollout'],
    advantages: T['advantages'],
  ): Promise<T['update']>;
  /** The family's report of the iteration. */
  protected abstract reportOf(done: {
    iteration: number;
    rollout: T['rollout'];
    advantages: T['advantages'];
    update: T['update'];
  }): T['report'];
  /** What the checkpoint holds (see {@link StateLayout}). */
  protected abstract layout(): StateLayout;

  /**
   * One iteration: a rollout, its advantages, then the update (the policy told the phase changed).
   * @throws NonFiniteUpdateError (with the iteration) after `maxNonFiniteSkips` consecutive
   *   minibatches with a non-finite loss or gradient norm; the weights are then still finite.
   */
  async iterate(): Promise<T['report']> {
    const rollout = await this.collect();
    const advantages = this.advantagesOf(rollout);
    this.policy.enterPhase?.('update');
    let update: T['update'];
    try {
      update = await this.update(rollout, advantages);
    } catch (e) {
      if (e instanceof NonFiniteUpdateError && e.iteration === null)
        throw new NonFiniteUpdateError(e.streak, e.detail, this.counters.iterations + 1);
      throw e;
    }
    this.nonFiniteStreak = update.nonFiniteStreak;
    this.counters = {
      iterations: this.counters.iterations + 1,
      envSteps: this.counters.envSteps + rollout.stats.envSteps,
      actorUpdates: this.counters.actorUpdates + update.actorSteps,
    };
    return this.reportOf({ iteration: this.counters.iterations, rollout, advantages, update });
  }

  /**
   * A checkpoint of the run as plain data (weights, optimisers, generator, counters).
   * Asynchronous (tensors are read with `data()`, which every backend serves); call it between
   * iterations, the state is the one at the call.
   */
  async getState(): Promise<T['checkpoint']> {
    const l = this.layout();
    const rng = this.rng.getState();
    const counters = { ...this.counters };
    const groups = Object.entries(l.weights);
    const optimizers = Object.entries(l.optimizers);
    const [weights, moments] = await Promise.all([
      Promise.all(groups.map(([, vars]) => readVariables(vars))),
      Promise.all(optimizers.map(([, o]) => o.getState())),
    ]);
    const state: SkeletonCheckpoint = {
      format: l.format,
      version: 1,
      ...l.identity,
      ...Object.fromEntries(groups.map(([name], i) => [`${name}Weights`, weights[i]!])),
      ...Object.fromEntries(optimizers.map(([name], i) => [`${name}Optimizer`, moments[i]!])),
      rng,
      counters,
      ...(l.keepsStreak ? { nonFiniteStreak: this.nonFiniteStreak } : {}),
      ...(this.lrScale === 1 ? {} : { lrScale: this.lrScale }),
    };
    return state as T['checkpoint'];
  }

  /**
   * Restores a checkpoint of {@link getState}. Checks everything before writing anything, so a
   * mismatched checkpoint leaves the trainer untouched; the environments are restored by the
   * caller (`trainer.steps = await vecEnv.restore(saved)`), else the next rollout resets them.
   * @throws CheckpointMismatchError naming what does not fit.
   */
  setState(checkpoint: T['checkpoint']): void {
    const state = checkpoint as SkeletonCheckpoint;
    const l = this.layout();
    if (state?.format !== l.format || state.version !== 1) {
      throw new CheckpointMismatchError(
        `expected format ${l.format} version 1, got ${String(state?.format)} v${String(state?.version)}.`,
      );
    }
    for (const [field, value] of Object.entries(l.identity)) {
      const saved = state[field] ?? l.identityDefaults?.[field];
      if (saved !== value) {
        throw new CheckpointMismatchError(
          `it was saved with ${field} '${String(saved)}', this trainer runs '${value}'.`,
        );
      }
    }
    const groups = Object.entries(l.weights);
    const optimizers = Object.entries(l.optimizers);
    for (const [name, vars] of groups)
      checkVariables(vars, state[`${name}Weights`] as TensorData[], `${name}Weights`);
    for (const [name, o] of optimizers) o.checkState(state[`${name}Optimizer`] as OptimizerState);
    for (const [name, vars] of groups)
      writeVariables(vars, state[`${name}Weights`] as TensorData[], `${name}Weights`);
    for (const [name, o] of optimizers) o.setState(state[`${name}Optimizer`] as OptimizerState);
    this.rng.setState(state.rng);
    this.counters = { ...state.counters };
    this.nonFiniteStreak = l.keepsStreak ? Number(state.nonFiniteStreak ?? 0) : 0;
    this.setLrScale(typeof state.lrScale === 'number' ? state.lrScale : 1);
    this.steps = null;
  }

  /**
   * Sets every optimiser's learning rate to the config's times `scale` (see {@link lrScale}).
   * @throws RangeError for a scale that is not a positive finite number.
   */
  setLrScale(scale: number): void {
    if (!(scale > 0 && Number.isFinite(scale)))
      throw new RangeError(`setLrScale(${scale}): expected a positive finite number`);
    const optimizers = Object.values(this.layout().optimizers);
    this.baseLrs ??= optimizers.map((o) => o.lr);
    optimizers.forEach((o, i) => {
      o.lr = this.baseLrs![i]! * scale;
    });
    this.lrScale = scale;
  }

  /** Frees the optimisers' moment variables (not the policy's variables, nor the environments). */
  dispose(): void {
    for (const o of Object.values(this.layout().optimizers)) o.dispose();
  }
}

/**
 * Refuses an empty list of trainable variables (a policy without an actor, or a critic-based
 * family's policy without a critic).
 * @throws PolicyContractError naming the list.
 */
export function requireTrainable(what: string, vars: readonly tf.Variable[]): void {
  if (vars.length === 0) {
    throw new PolicyContractError(what, 'expected at least one trainable tf.Variable.');
  }
}
