import { readVariables } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { EtpoArgumentError } from './errors.js';

/** Hyper-parameters of {@link Lion}. */
export interface LionOptions {
  lr: number;
  /** Interpolation of the update direction (default 0.9). */
  beta1?: number;
  /** Decay of the momentum (default 0.99). */
  beta2?: number;
  /** Decoupled weight decay λ (default 0). */
  weightDecay?: number;
}

/**
 * Lion's state as plain data: the momentum of every variable. `v` is always empty (Lion keeps no
 * second moment); it is there so that a Lion state has the shape of an Adam state.
 */
export interface LionState {
  kind: 'lion';
  step: number;
  m: Float32Array[];
  v: Float32Array[];
}

/**
 * The Lion optimiser (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"), which
 * ETPO's authors trained with: per variable,
 *
 *   c ← β1·m + (1 − β1)·g;   p ← p − lr·(sign(c) + λ·p);   m ← β2·m + (1 − β2)·g
 *
 * Every coordinate moves by ±lr (plus decay), so Lion's learning rates are usually 3–10× smaller
 * than AdamW's. Same interface as `@poad/ppo`'s `Adam` (`step`, `getState`, `setState`).
 */
export class Lion {
  private readonly m: tf.Variable[];
  private t = 0;
  lr: number;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly weightDecay: number;

  constructor(
    readonly variables: readonly tf.Variable[],
    options: LionOptions,
  ) {
    this.lr = options.lr;
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.99;
    this.weightDecay = options.weightDecay ?? 0;
    // tidy frees the zeros each variable is made from (a variable copies its initial value).
    this.m = variables.map((x) => tf.tidy(() => tf.variable(tf.zerosLike(x), false)));
  }

  get stepCount(): number {
    return this.t;
  }

  /** One update with `grads[i]` for `variables[i]` (`null` = zero gradient); grads are not disposed. */
  step(grads: readonly (tf.Tensor | null)[]): void {
    if (grads.length !== this.variables.length) {
      throw new EtpoArgumentError(
        'grads',
        `expected ${this.variables.length} gradients, got ${grads.length}`,
      );
    }
    this.t += 1;
    tf.tidy(() => {
      this.variables.forEach((p, i) => {
        const g = grads[i] ?? tf.zerosLike(p);
        const m = this.m[i]!;
        const c = tf.add(tf.mul(m, this.beta1), tf.mul(g, 1 - this.beta1));
        const decayed = this.weightDecay > 0 ? tf.mul(p, 1 - this.lr * this.weightDecay) : p;
        p.assign(tf.sub(decayed, tf.mul(tf.sign(c), this.lr)));
        m.assign(tf.add(tf.mul(m, this.beta2), tf.mul(g, 1 - this.beta2)));
      });
    });
  }

  async getState(): Promise<LionState> {
    return { kind: 'lion', step: this.t, m: await readVariables(this.m).then(flat), v: [] };
  }

  setState(state: LionState): void {
    if (state?.kind !== 'lion' || state.m.length !== this.m.length) {
      throw new EtpoArgumentError(
        'optimizer state',
        `expected a Lion state with ${this.m.length} momenta (was the run trained with another optimiser?)`,
      );
    }
    state.m.forEach((src, i) => {
      if (src.length !== this.m[i]!.size) {
        throw new EtpoArgumentError(
          `optimizer state m[${i}]`,
          `has size ${src.length}, expected ${this.m[i]!.size}`,
        );
      }
    });
    tf.tidy(() => {
      this.m.forEach((x, i) => {
        x.assign(tf.tensor(state.m[i]!, x.shape, 'float32'));
      });
    });
    this.t = state.step;
  }

  dispose(): void {
    tf.dispose(this.m);
  }
}

const flat = (ts: { data: Float32Array }[]) => ts.map((t) => t.data);
