import * as tf from '@tensorflow/tfjs-core';
import { CheckpointMismatchError } from './errors.js';
import { readFloats } from './read-floats.js';

/** Hyper-parameters of {@link Adam}. */
export interface AdamOptions {
  /** Learning rate. */
  lr: number;
  /** First-moment decay β1 (default 0.9). */
  beta1?: number;
  /** Second-moment decay β2 (default 0.999). */
  beta2?: number;
  /** Denominator ε (default 1e-5, the original code's value). */
  eps?: number;
  /** Decoupled weight decay (AdamW); 0 (default) is plain Adam. */
  weightDecay?: number;
}

/** Optimiser state as plain data: step count and both moments of every variable. */
export interface AdamState {
  /** Updates taken so far. */
  step: number;
  /** First moments, one flat array per variable (variable order). */
  m: Float32Array[];
  /** Second moments, one flat array per variable (variable order). */
  v: Float32Array[];
}

/**
 * Adam / AdamW over a fixed list of `tf.Variable`s, written out so that its moments can be saved
 * as plain data and restored exactly. The update is PyTorch's:
 *
 *   p ← p·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
 *   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + ε)
 */
export class Adam {
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];
  private t = 0;
  /** Current learning rate (may be changed between steps, e.g. for a schedule). */
  lr: number;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;
  private readonly weightDecay: number;

  constructor(
    /** The variables this optimiser updates. */
    readonly variables: readonly tf.Variable[],
    options: AdamOptions,
  ) {
    this.lr = options.lr;
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.eps = options.eps ?? 1e-5;
    this.weightDecay = options.weightDecay ?? 0;
    // tidy frees the zeros each variable is made from (a variable copies its initial value).
    const zeros = (x: tf.Variable) => tf.tidy(() => tf.variable(tf.zerosLike(x), false));
    this.m = variables.map(zeros);
    this.v = variables.map(zeros);
  }

  /** Number of steps taken. */
  get stepCount(): number {
    return this.t;
  }

  /**
   * One update with `grads[i]` for `variables[i]` (`null` = zero gradient). Does not dispose
   * the gradients.
   */
  step(grads: readonly (tf.Tensor | null)[]): void {
    if (grads.length !== this.variables.length) {
      throw new RangeError(
        `Adam.step(grads): expected ${this.variables.length} gradients, got ${grads.length}.`,
      );
    }
    this.t += 1;
    const bc1 = 1 - this.beta1 ** this.t;
    const bc2 = Math.sqrt(1 - this.beta2 ** this.t);
    tf.tidy(() => {
      this.variables.forEach((p, i) => {
        const g = grads[i] ?? tf.zerosLike(p);
        const m = this.m[i]!;
        const v = this.v[i]!;
        if (this.weightDecay > 0) p.assign(tf.mul(p, 1 - this.lr * this.weightDecay));
        m.assign(tf.add(tf.mul(m, this.beta1), tf.mul(g, 1 - this.beta1)));
        v.assign(tf.add(tf.mul(v, this.beta2), tf.mul(tf.square(g), 1 - this.beta2)));
        const denom = tf.add(tf.div(tf.sqrt(v), bc2), this.eps);
        p.assign(tf.sub(p, tf.mul(tf.div(m, denom), this.lr / bc1)));
      });
    });
  }

  /**
   * A copy of the state as plain data, read asynchronously (works on every backend). Every read
   * starts at the call, so the copy is the state at the call.
   */
  async getState(): Promise<AdamState> {
    const step = this.t;
    const moments = await readFloats([...this.m, ...this.v]);
    return { step, m: moments.slice(0, this.m.length), v: moments.slice(this.m.length) };
  }

  /** Restores a state from {@link Adam.getState} (sizes must match the variables). */
  setState(state: AdamState): void {
    if (state.m.length !== this.m.length || state.v.length !== this.v.length) {
      throw new CheckpointMismatchError(
        `optimiser has ${this.m.length} variables, state has ${state.m.length}.`,
      );
    }
    this.m.forEach((x, i) => {
      const src = state.m[i]!;
      if (src.length !== x.size || state.v[i]!.length !== x.size) {
        throw new CheckpointMismatchError(
          `optimiser moment ${i} has size ${src.length}, expected ${x.size}.`,
        );
      }
    });
    tf.tidy(() => {
      this.m.forEach((x, i) => {
        x.assign(tf.tensor(state.m[i]!, x.shape, 'float32'));
      });
      this.v.forEach((x, i) => {
        x.assign(tf.tensor(state.v[i]!, x.shape, 'float32'));
      });
    });
    this.t = state.step;
  }

  /** Frees the moment variables. */
  dispose(): void {
    for (const x of [...this.m, ...this.v]) x.dispose();
  }
}
