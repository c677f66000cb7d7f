import * as tf from '@tensorflow/tfjs-core';
import type { ADAMW_FIELDS, PpoConfig } from './config.js';
import {
  MomentOptimizer,
  type MomentOptimizerOptions,
  type OptimizerState,
} from './moment-optimizer.js';
import { MULTI_TENSOR_KERNELS } from './multi-tensor.js';

/** Hyper-parameters of {@link Adam}. */
export interface AdamOptions extends MomentOptimizerOptions {
  /** First-moment decay β1 (default 0.9). */
  beta1?: number;
  /** Second-moment decay β2 (default 0.999). */
  beta2?: number;
  /** Denominator ε (default 1e-5, the original code's value). */
  eps?: number;
  /** Decoupled weight decay (AdamW); 0 (default) is plain Adam. */
  weightDecay?: number;
}

/** Adam's state as plain data: step count and both moments of every variable. */
export type AdamState = OptimizerState;

/**
 * Adam / AdamW over a fixed list of `tf.Variable`s, written out so that its moments can be saved
 * as plain data and restored exactly. The update is PyTorch's:
 *
 *   p ← p·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
 *   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε)
 *
 * The moments, clipping, fused path and state are {@link MomentOptimizer}'s.
 */
export class Adam extends MomentOptimizer<AdamState> {
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;

  constructor(variables: readonly tf.Variable[], options: AdamOptions) {
    super(variables, options, 2);
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-5;
  }

  protected updateOne(p: tf.Variable, g: tf.Tensor, [m, v]: readonly tf.Variable[]): void {
    const bc1 = 1 - this.beta1 ** this.t;
    const bc2 = Math.sqrt(1 - this.beta2 ** this.t);
    if (this.weightDecay > 0) p.assign(tf.mul(p, 1 - this.lr * this.weightDecay));
    m!.assign(tf.add(tf.mul(m!, this.beta1), tf.mul(g, 1 - this.beta1)));
    v!.assign(tf.add(tf.mul(v!, this.beta2), tf.mul(tf.square(g), 1 - this.beta2)));
    const denom = tf.add(tf.div(tf.sqrt(v!), bc2), this.eps);
    p.assign(tf.sub(p, tf.mul(tf.div(m!, denom), this.lr / bc1)));
  }

  protected fusedKernel(
    p: tf.Tensor1D,
    g: tf.Tensor1D,
    [m, v]: readonly tf.Variable[],
    { norm, maxNorm }: { norm: tf.Tensor1D; maxNorm: number },
  ): tf.Tensor[] {
    const bc1 = 1 - this.beta1 ** this.t;
    const bc2 = Math.sqrt(1 - this.beta2 ** this.t);
    return tf.engine().runKernel(
      MULTI_TENSOR_KERNELS.adamW,
      { p, g, m: m!, v: v!, norm },
      {
        maxNorm,
        beta1: this.beta1,
        beta2: this.beta2,
        decay: this.weightDecay > 0 ? 1 - this.lr * this.weightDecay : 1,
        bc2,
        eps: this.eps,
        lrOverBc1: this.lr / bc1,
      },
    ) as tf.Tensor[];
  }

  protected stateOf(step: number, [m, v]: Float32Array[][]): AdamState {
    return { step, m: m!, v: v! };
  }

  protected momentsOf(state: AdamState): readonly (readonly Float32Array[])[] {
    return [state.m, state.v];
  }
}

/** A config's AdamW settings by PPO's names ({@link ADAMW_FIELDS}), as every trainer here has them. */
export type AdamWConfig = Pick<PpoConfig, (typeof ADAMW_FIELDS)[number]>;

/**
 * {@link Adam} over `variables` at learning rate `lr` with `config`'s β1, β2, ε and weight decay;
 * `weightDecay` replaces the config's (PPO's critic steps without decay: 0).
 */
export function adamFromConfig(
  variables: readonly tf.Variable[],
  config: AdamWConfig,
  lr: number,
  weightDecay: number = config.weightDecay,
): Adam {
  return new Adam(variables, {
    lr,
    beta1: config.adamBeta1,
    beta2: config.adamBeta2,
    eps: config.adamEps,
    weightDecay,
  });
}
