import {
  assignFlat,
  type GradClip,
  MULTI_TENSOR_KERNELS,
  multiTensorKernels,
  packFlat,
  readVariables,
} from '@poad/ppo';
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
  /**
   * Step all variables at once with the backend's multi-tensor kernels where the active backend
   * has them (webgpu with `@poad/tfjs-kernels`): a constant number of GPU programs per step.
   * Default true; other backends always step per variable.
   */
  fused?: boolean;
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
  /** Per-variable momenta, or one flat momentum in {@link Lion.fused} mode. */
  private readonly m: tf.Variable[];
  private t = 0;
  lr: number;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly weightDecay: number;
  /** True when the steps run as one multi-tensor program (see {@link LionOptions.fused}). */
  readonly fused: boolean;

  constructor(
    readonly variables: readonly tf.Variable[],
    options: LionOptions,
  ) {
    this.lr = options.lr;
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.99;
    this.weightDecay = options.weightDecay ?? 0;
    this.fused =
      (options.fused ?? true) &&
      multiTensorKernels() &&
      variables.length > 0 &&
      variables.every((x) => x.dtype === 'float32');
    const total = variables.reduce((s, x) => s + x.size, 0);
    // tidy frees the zeros each variable is made from (a variable copies its initial value).
    this.m = this.fused
      ? [tf.tidy(() => tf.variable(tf.zeros([total]), false))]
      : variables.map((x) => tf.tidy(() => tf.variable(tf.zerosLike(x), false)));
  }

  get stepCount(): number {
    return this.t;
  }

  /**
   * One update with `grads[i]` for `variables[i]` (`null` = zero gradient), the gradients first
   * multiplied by the clip coefficient of `clip` when given; grads are not disposed.
   */
  step(grads: readonly (tf.Tensor | null)[], clip?: GradClip): void {
    if (grads.length !== this.variables.length) {
      throw new EtpoArgumentError(
        'grads',
        `expected ${this.variables.length} gradients, got ${grads.length}`,
      );
    }
    this.t += 1;
    if (this.fused) {
      this.fusedStep(grads, clip);
      return;
    }
    tf.tidy(() => {
      const coef = clip === undefined ? null : coefficientOf(clip);
      this.variables.forEach((p, i) => {
        const raw = grads[i] ?? null;
        const g = raw === null ? tf.zerosLike(p) : coef === null ? raw : tf.mul(raw, coef);
        const m = this.m[i]!;
        const c = tf.add(tf.mul(m, this.beta1), tf.mul(g, 1 - this.beta1));
        const decayed = this.weightDecay > 0 ? tf.mul(p, 1 - this.lr * this.weightDecay) : p;
        p.assign(tf.sub(decayed, tf.mul(tf.sign(c), this.lr)));
        m.assign(tf.add(tf.mul(m, this.beta2), tf.mul(g, 1 - this.beta2)));
      });
    });
  }

  /** {@link step} as one multi-tensor Lion program over flat copies of all variables. */
  private fusedStep(grads: readonly (tf.Tensor | null)[], clip: GradClip | undefined): void {
    tf.tidy(() => {
      const p = packFlat(this.variables);
      const g = packFlat(this.variables.map((x, i) => grads[i] ?? tf.zerosLike(x)));
      const norm =
        clip === undefined
          ? tf.tensor1d([0])
          : typeof clip.norm === 'number'
            ? tf.tensor1d([clip.norm])
            : tf.reshape(clip.norm, [1]);
      const [p1, m1] = tf.engine().runKernel(
        MULTI_TENSOR_KERNELS.lion,
        { p, g, m: this.m[0]!, norm },
        {
          maxNorm: clip?.maxNorm ?? 0,
          beta1: this.beta1,
          beta2: this.beta2,
          decay: this.weightDecay > 0 ? 1 - this.lr * this.weightDecay : 1,
          lr: this.lr,
        },
      ) as tf.Tensor[];
      assignFlat(this.variables, p1!);
      this.m[0]!.assign(m1!);
    });
  }

  async getState(): Promise<LionState> {
    const step = this.t;
    const read = await readVariables(this.m).then(flat);
    if (!this.fused) return { kind: 'lion', step, m: read, v: [] };
    let o = 0;
    const m = this.variables.map((x) => {
      const part = read[0]!.slice(o, o + x.size);
      o += x.size;
      return part;
    });
    return { kind: 'lion', step, m, v: [] };
  }

  setState(state: LionState): void {
    if (state?.kind !== 'lion' || state.m.length !== this.variables.length) {
      throw new EtpoArgumentError(
        'optimizer state',
        `expected a Lion state with ${this.variables.length} momenta (was the run trained with another optimiser?)`,
      );
    }
    state.m.forEach((src, i) => {
      if (src.length !== this.variables[i]!.size) {
        throw new EtpoArgumentError(
          `optimizer state m[${i}]`,
          `has size ${src.length}, expected ${this.variables[i]!.size}`,
        );
      }
    });
    tf.tidy(() => {
      if (this.fused) {
        const all = new Float32Array(state.m.reduce((s, x) => s + x.length, 0));
        let o = 0;
        for (const x of state.m) {
          all.set(x, o);
          o += x.length;
        }
        this.m[0]!.assign(tf.tensor1d(all, 'float32'));
      } else {
        this.m.forEach((x, i) => {
          x.assign(tf.tensor(state.m[i]!, x.shape, 'float32'));
        });
      }
    });
    this.t = state.step;
  }

  dispose(): void {
    tf.dispose(this.m);
  }
}

/** The clip coefficient of `clip`: a number when its norm was read, else a scalar tensor. */
function coefficientOf(clip: GradClip): number | tf.Scalar {
  const { norm, maxNorm } = clip;
  if (maxNorm === null || maxNorm === 0) return 1;
  if (typeof norm === 'number') return Math.min(1, maxNorm / (norm + 1e-6));
  return tf.minimum(1, tf.div(maxNorm, tf.add(norm, 1e-6))) as tf.Scalar;
}

const flat = (ts: { data: Float32Array }[]) => ts.map((t) => t.data);
