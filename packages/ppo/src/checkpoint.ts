import * as tf from '@tensorflow/tfjs-core';
import type { AdamState } from './adam.js';
import type { Algorithm } from './config.js';
import { CheckpointMismatchError, NonFiniteStateError } from './errors.js';
import { readFloats } from './read-floats.js';
import type { RngState } from './rng.js';

/** A tensor as plain data. */
export interface TensorData {
  /** Tensor shape. */
  shape: number[];
  /** Row-major float32 values. */
  data: Float32Array;
}

/** Step counters of a run. */
export interface TrainerCounters {
  /** Completed iterations (rollout + update). */
  iterations: number;
  /** Environment steps taken (T·N per iteration). */
  envSteps: number;
  /** Actor optimiser steps taken (skipped minibatches excluded). */
  actorUpdates: number;
}

/**
 * Everything needed to resume a run exactly, as plain data (typed arrays and numbers): trainable
 * actor weights (e.g. LoRA adapters), critic weights (value head), both optimisers' moments, the
 * generator state and the counters. The frozen base model is not included.
 *
 * Resuming is bit-exact when the environments are also at the same point. The trainer does not
 * own environment state: save `VecEnv.getState()` beside the checkpoint and, after `setState`,
 * set `trainer.steps = await vecEnv.restore(saved)`; otherwise the next iteration resets the
 * environments. `checkpointToJson` / `checkpointFromJson` give a bit-exact text form.
 */
export interface TrainerCheckpoint {
  /** Format tag. */
  format: 'poad-ppo-checkpoint';
  /** Format version. */
  version: 1;
  /** The algorithm that produced it. */
  algorithm: Algorithm;
  /** `policy.actorVariables`, in order. */
  actorWeights: TensorData[];
  /** `policy.criticVariables`, in order. */
  criticWeights: TensorData[];
  /** AdamW state of the actor. */
  actorOptimizer: AdamState;
  /** Adam state of the critic. */
  criticOptimizer: AdamState;
  /** The target critic's copy of `criticWeights`, with `targetCriticEvery` > 0 only. */
  targetWeights?: TensorData[];
  /** Trainer generator state. */
  rng: RngState;
  /** Step counters. */
  counters: TrainerCounters;
}

/** Copies variables into plain data (read asynchronously; works on every backend). */
export async function readVariables(vars: readonly tf.Variable[]): Promise<TensorData[]> {
  const data = await readFloats(vars);
  return vars.map((v, i) => ({ shape: [...v.shape], data: data[i]! }));
}

/**
 * Checks that plain data fits variables (count and shapes) without writing anything.
 * @throws CheckpointMismatchError naming the first variable whose count or shape differs.
 */
export function checkVariables(
  vars: readonly tf.Variable[],
  data: readonly TensorData[],
  what: string,
): void {
  if ((data as readonly TensorData[] | undefined) === undefined) {
    throw new CheckpointMismatchError(
      `it has no ${what} (${vars.length} tensors expected): it was saved by a run without them.`,
    );
  }
  if (vars.length !== data.length) {
    throw new CheckpointMismatchError(
      `${what} has ${data.length} tensors, the policy has ${vars.length}.`,
    );
  }
  vars.forEach((v, i) => {
    const d = data[i]!;
    if (
      d.shape.length !== v.shape.length ||
      d.shape.some((x, j) => x !== v.shape[j]) ||
      d.data.length !== v.size
    ) {
      throw new CheckpointMismatchError(
        `${what}[${i}] (${v.name}) has shape [${d.shape}], the policy expects [${v.shape}].`,
      );
    }
  });
}

/**
 * Writes plain data into variables (shapes must match; checked before anything is written).
 * @throws CheckpointMismatchError naming the first variable whose count or shape differs.
 */
export function writeVariables(
  vars: readonly tf.Variable[],
  data: readonly TensorData[],
  what: string,
): void {
  checkVariables(vars, data, what);
  tf.tidy(() => {
    vars.forEach((v, i) => {
      v.assign(tf.tensor(data[i]!.data, v.shape, 'float32'));
    });
  });
}

/**
 * Checks that every array of a checkpoint (weights and both optimisers' moments) is finite, on the
 * host copies `getState` made; call it before writing a checkpoint anywhere. Any trainer's
 * checkpoint with these fields qualifies (e.g. `@poad/etpo`'s, whose `targetWeights` are checked
 * too, or a critic-free trainer's, without critic fields).
 * @throws NonFiniteStateError naming the first tensor with a NaN or ±∞ and how many it holds.
 */
export function assertFiniteCheckpoint(
  state: Pick<TrainerCheckpoint, 'actorWeights' | 'actorOptimizer'> &
    Partial<Pick<TrainerCheckpoint, 'criticWeights' | 'criticOptimizer'>> & {
      targetWeights?: TensorData[];
    },
): void {
  const weights = (key: string, ts: readonly TensorData[]) =>
    ts.map((t, i) => [`${key}[${i}]`, t.data] as [string, Float32Array]);
  const arrays: [string, Float32Array][] = [
    ...weights('actorWeights', state.actorWeights),
    ...weights('criticWeights', state.criticWeights ?? []),
    ...weights('targetWeights', state.targetWeights ?? []),
    ...(['actorOptimizer', 'criticOptimizer'] as const).flatMap((o) =>
      (['m', 'v'] as const).flatMap((k) =>
        (state[o]?.[k] ?? []).map((d, i) => [`${o}.${k}[${i}]`, d] as [string, Float32Array]),
      ),
    ),
  ];
  for (const [name, data] of arrays) {
    let first = -1;
    let count = 0;
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i]!)) {
        if (first < 0) first = i;
        count++;
      }
    }
    if (count > 0) {
      throw new NonFiniteStateError(
        name,
        `holds ${count} non-finite value${count === 1 ? '' : 's'} of ${data.length} (the first at index ${first}: ${data[first]})`,
      );
    }
  }
}
