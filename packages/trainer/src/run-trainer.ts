import { UserError } from '@poad/config';
import type { TextStep } from '@poad/envs-core';
import type { RolloutBuffer, RolloutStats, TrainerCounters, UpdateDiagnostics } from '@poad/ppo';
import type { MetricsRow } from '@poad/run-kit';
import {
  type GpuCounters,
  gpuCounters,
  gpuCountersSince,
  setGpuPhase,
  withGpuPhase,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';

/** What one iteration of any trainer gives the training loop. */
export interface RunIterationReport {
  readonly iteration: number;
  readonly rollout: RolloutStats;
  /** The rollout learned from. */
  readonly buffer: RolloutBuffer;
  /** The update's diagnostics as metrics columns (loss, entropy, KL, gradient norms, …). */
  readonly update: MetricsRow;
  readonly minibatches: number;
  readonly nonFiniteSkips: number;
  /**
   * Per-token (or per-action) credit for the token-credit view: PPO's advantages, or ETPO's soft
   * TD errors y − V at each token.
   */
  readonly credit: {
    readonly level: 'token' | 'action';
    readonly values: ArrayLike<number>;
    /** What the values are, for the view's title, e.g. "advantages". */
    readonly name: string;
  };
  /**
   * On webgpu, the GPU work of the iteration (programs dispatched, host reads, bytes read back),
   * in total and by phase (`acting`, `values`, `update`); absent on other backends.
   */
  readonly gpu?: GpuCounters;
}

/**
 * The one interface the training loop drives, whatever the algorithm: each registry entry wraps
 * its trainer (`@poad/ppo`'s `PpoTrainer`, `@poad/etpo`'s `EtpoTrainer`, …) as one.
 */
export interface RunTrainer {
  iterate(): Promise<RunIterationReport>;
  /** The checkpoint as plain data (weights, optimisers, generator, counters). */
  getState(): Promise<unknown>;
  setState(state: unknown): void;
  readonly counters: TrainerCounters;
  /** The environments' current steps (restored on resume). */
  steps: TextStep[] | null;
  /** Largest run of non-finite minibatches before the run stops. */
  readonly maxNonFiniteSkips: number;
  /**
   * Restores a checkpoint's weights, optimisers and generator (a rollback) but keeps the counters
   * and the environments' steps, and multiplies the learning rates by `factor`; returns the new
   * learning-rate scale.
   */
  rollBack(state: unknown, factor: number): number;
  /** Frees the optimisers' tensors (the policy and the environments are the caller's). */
  dispose(): void;
}

/** What a trainer needs to be a {@link RunTrainer}. */
export interface TrainerLike<State> {
  getState(): Promise<State>;
  setState(state: State): void;
  counters: TrainerCounters;
  steps: TextStep[] | null;
  readonly config: { readonly maxNonFiniteSkips: number };
  /** What the learning rates are multiplied by, and its setter (`TrainerBase` has both). */
  readonly lrScale?: number;
  setLrScale?(scale: number): void;
  dispose(): void;
}

/**
 * A {@link RunTrainer} over an algorithm's trainer `t`, whose iterations `report` turns into the
 * run loop's reports (the registry entry's `report`). On webgpu each report carries the
 * iteration's GPU work (`gpu`), and the work of `getState` is counted in the `checkpoint` phase.
 */
export function runTrainerOf<State, Report>(
  t: TrainerLike<State> & { iterate(): Promise<Report> },
  report: (iteration: Report) => RunIterationReport,
): RunTrainer {
  return {
    async iterate() {
      // Counters exist once any WebGPU device opened in this process; only a run on webgpu reports
      // them (a wasm run after a webgpu one in the same process has no GPU work of its own).
      const onGpu = tf.getBackend() === 'webgpu';
      const before = onGpu ? gpuCounters() : null;
      let done: RunIterationReport;
      try {
        done = report(await t.iterate());
      } finally {
        // Work after the iteration (logging, evaluations) is not the trainer's.
        setGpuPhase('other');
      }
      const after = onGpu ? gpuCounters() : null;
      return before && after ? { ...done, gpu: gpuCountersSince(before, after) } : done;
    },
    getState: () => withGpuPhase('checkpoint', () => t.getState()),
    setState: (s) => t.setState(s as State),
    get counters() {
      return t.counters;
    },
    get steps() {
      return t.steps;
    },
    set steps(s) {
      t.steps = s;
    },
    maxNonFiniteSkips: t.config.maxNonFiniteSkips,
    rollBack(state, factor) {
      if (!t.setLrScale)
        throw new UserError(
          "--on-collapse rollback: this algorithm's trainer cannot change its learning rates (it has no setLrScale); use --on-collapse warn or stop",
        );
      const scale = (t.lrScale ?? 1) * factor;
      const counters = { ...t.counters };
      const steps = t.steps;
      t.setState(state as State);
      // The environment steps taken since are not rewound: the counters and the environments go on.
      t.counters = counters;
      t.steps = steps;
      t.setLrScale(scale);
      return scale;
    },
    dispose: () => t.dispose(),
  };
}

/**
 * An update's diagnostics as the trainers give them: PPO's names and meanings (null: not defined
 * for the algorithm).
 */
export interface UpdateColumns
  extends Pick<
    UpdateDiagnostics,
    | 'policyLoss'
    | 'valueLoss'
    | 'entropy'
    | 'explainedVariance'
    | 'actorGradNorm'
    | 'criticGradNorm'
    | 'minibatches'
    | 'skippedMinibatches'
    | 'nonFiniteSkips'
    | 'tokensPerSec'
  > {
  approxKl: number | null;
  klToReference?: number;
  clipFraction: number | null;
  /** Columns of the algorithm's own, after the common ones (e.g. a group's return spread). */
  extra?: Readonly<Record<string, number>>;
}

/** A trainer's iteration as a {@link RunIterationReport}: metrics columns in a fixed order. */
export function reportOf(
  r: { iteration: number; rollout: RolloutStats; buffer: RolloutBuffer },
  u: UpdateColumns,
  credit: RunIterationReport['credit'],
): RunIterationReport {
  return {
    iteration: r.iteration,
    rollout: r.rollout,
    buffer: r.buffer,
    minibatches: u.minibatches,
    nonFiniteSkips: u.nonFiniteSkips,
    update: {
      policyLoss: u.policyLoss,
      valueLoss: u.valueLoss,
      entropy: u.entropy,
      approxKl: u.approxKl,
      ...(u.klToReference === undefined ? {} : { klToReference: u.klToReference }),
      clipFraction: u.clipFraction,
      explainedVariance: u.explainedVariance,
      actorGradNorm: u.actorGradNorm,
      criticGradNorm: u.criticGradNorm,
      minibatches: u.minibatches,
      skippedMinibatches: u.skippedMinibatches,
      nonFiniteSkips: u.nonFiniteSkips,
      rolloutEnvStepsPerSec: r.rollout.envStepsPerSec,
      rolloutTokensPerSec: r.rollout.tokensPerSec,
      updateTokensPerSec: u.tokensPerSec,
      ...(u.extra ?? {}),
    },
    credit,
  };
}
