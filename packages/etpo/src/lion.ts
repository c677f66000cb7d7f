import {
  MomentOptimizer,
  type MomentOptimizerOptions,
  MULTI_TENSOR_KERNELS,
  type OptimizerState,
} from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';

/** Hyper-parameters of {@link Lion}. */
export interface LionOptions extends MomentOptimizerOptions {
  /** Interpolation of the update direction (default 0.9). */
  beta1?: number;
  /** Decay of the momentum (default 0.99). */
  beta2?: number;
}

/**
 * Lion's state as plain data: the momentum of every variable. `v` is always empty (Lion keeps no
 * second moment); it is there so that a Lion state has the shape of an Adam state.
 */
export interface LionState extends OptimizerState {
  kind: 'lion';
}

/**
 * The Lion optimiser (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"), which
 * ETPO's authors trained with: per variable,
 *
 *   c ← β1·m + (1 − β1)·g;   p ← p − lr·(sign(c) + λ·p);   m ← β2·m + (1 − β2)·g
 *
 * Every coordinate moves by ±lr (plus decay), so Lion's learning rates are usually 3–10× smaller
 * than AdamW's. Same interface as `@poad/ppo`'s `Adam` (`step`, `getState`, `setState`): both are
 * `MomentOptimizer`s, which keep the moments, the clipping, the fused path and the state.
 */
export class Lion extends MomentOptimizer<LionState> {
  private readonly beta1: number;
  private readonly beta2: number;

  constructor(variables: readonly tf.Variable[], options: LionOptions) {
    super(variables, options, 1);
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.99;
  }

  protected updateOne(p: tf.Variable, g: tf.Tensor, [m]: readonly tf.Variable[]): void {
    const c = tf.add(tf.mul(m!, this.beta1), tf.mul(g, 1 - this.beta1));
    const decayed = this.weightDecay > 0 ? tf.mul(p, 1 - this.lr * this.weightDecay) : p;
    p.assign(tf.sub(decayed, tf.mul(tf.sign(c), this.lr)));
    m!.assign(tf.add(tf.mul(m!, this.beta2), tf.mul(g, 1 - this.beta2)));
  }

  protected fusedKernel(
    p: tf.Tensor1D,
    g: tf.Tensor1D,
    [m]: readonly tf.Variable[],
    { norm, maxNorm }: { norm: tf.Tensor1D; maxNorm: number },
  ): tf.Tensor[] {
    return tf.engine().runKernel(
      MULTI_TENSOR_KERNELS.lion,
      { p, g, m: m!, norm },
      {
        maxNorm,
        beta1: this.beta1,
        beta2: this.beta2,
        decay: this.weightDecay > 0 ? 1 - this.lr * this.weightDecay : 1,
        lr: this.lr,
      },
    ) as tf.Tensor[];
  }

  protected stateOf(step: number, [m]: Float32Array[][]): LionState {
    return { kind: 'lion', step, m: m!, v: [] };
  }

  protected momentsOf(state: LionState): readonly (readonly Float32Array[])[] {
    if (state?.kind !== 'lion') {
      throw new EtpoArgumentError(
        'optimizer state',
        `expected a Lion state with ${this.variables.length} momenta (was the run trained with another optimiser?)`,
      );
    }
    return [state.m];
  }
}
