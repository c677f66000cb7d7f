import * as tf from '@tensorflow/tfjs-core';
import { CheckpointMismatchError } from './errors.js';
import { clipCoefficient } from './grad-clip.js';
import {
  assignFlat,
  clipInputs,
  type GradClip,
  MULTI_TENSOR_KERNELS,
  multiTensorKernels,
  packFlat,
} from './multi-tensor.js';
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
  /**
   * Step all variables at once with the backend's multi-tensor kernels where the active backend
   * has them (webgpu with `@poad/tfjs-kernels`): a constant number of GPU programs per step
   * instead of a dozen per variable, equal to the per-variable step within float rounding.
   * Default true; other backends always step per variable.
   */
  fused?: boolean;
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
  /** Per-variable moments, or one flat moment each in {@link Adam.fused} mode. */
  private readonly m: tf.Variable[];
  private readonly v: tf.Variable[];
  private t = 0;
  /** Current learning rate (may be changed between steps, e.g. for a schedule). */
  lr: number;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;
  private readonly weightDecay: number;
  /**
   * True when the steps run as one multi-tensor program over flat copies of the variables (see
   * {@link AdamOptions.fused}); the moments are then kept flat, in variable order.
   */
  readonly fused: boolean;
  private readonly sizes: number[];

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
    this.sizes = variables.map((x) => x.size);
    this.fused =
      (options.fused ?? true) &&
      multiTensorKernels() &&
      variables.length > 0 &&
      variables.every((x) => x.dtype === 'float32');
    // tidy frees the zeros each variable is made from (a variable copies its initial value).
    const total = this.sizes.reduce((a, b) => a + b, 0);
    const zeros = (x: tf.Tensor) => tf.tidy(() => tf.variable(tf.zerosLike(x), false));
    const flatZeros = () => tf.tidy(() => tf.variable(tf.zeros([total]), false));
    this.m = this.fused ? [flatZeros()] : variables.map(zeros);
    this.v = this.fused ? [flatZeros()] : variables.map(zeros);
  }

  /** Number of steps taken. */
  get stepCount(): number {
    return this.t;
  }

  /**
   * One update with `grads[i]` for `variables[i]` (`null` = zero gradient), the gradients first
   * multiplied by the clip coefficient of `clip` when given. Does not dispose the gradients.
   */
  step(grads: readonly (tf.Tensor | null)[], clip?: GradClip): void {
    if (grads.length !== this.variables.length) {
      throw new RangeError(
        `Adam.step(grads): expected ${this.variables.length} gradients, got ${grads.length}.`,
      );
    }
    this.t += 1;
    const bc1 = 1 - this.beta1 ** this.t;
    const bc2 = Math.sqrt(1 - this.beta2 ** this.t);
    if (this.fused) {
      this.fusedStep(grads, clip, bc1, bc2);
      return;
    }
    tf.tidy(() => {
      const coef = clip === undefined ? null : coefficientOf(clip);
      this.variables.forEach((p, i) => {
        const raw = grads[i] ?? null;
        const g = raw === null ? tf.zerosLike(p) : coef === null ? raw : tf.mul(raw, coef);
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
   * In {@link fused} mode a step whose clip norm is not finite is not taken on the device (the
   * variables and moments stay as they were; a caller folds its checks into the norm, see
   * `deviceGate`). Once the host has read that it was so, this takes the step back from the step
   * count, so that the optimiser is where it would be had the step never been asked for.
   */
  stepSkippedOnDevice(): void {
    if (!this.fused || this.t === 0) {
      throw new RangeError(
        'Adam.stepSkippedOnDevice(): only a fused optimiser skips steps on the device, after a step',
      );
    }
    this.t -= 1;
  }

  /** {@link step} as one multi-tensor AdamW program over flat copies of all variables. */
  private fusedStep(
    grads: readonly (tf.Tensor | null)[],
    clip: GradClip | undefined,
    bc1: number,
    bc2: number,
  ): void {
    tf.tidy(() => {
      const p = packFlat(this.variables);
      const g = packFlat(this.variables.map((x, i) => grads[i] ?? tf.zerosLike(x)));
      const { norm, maxNorm } = clipInputs(clip);
      const [p1, m1, v1] = tf.engine().runKernel(
        MULTI_TENSOR_KERNELS.adamW,
        { p, g, m: this.m[0]!, v: this.v[0]!, norm },
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
      assignFlat(this.variables, p1!);
      this.m[0]!.assign(m1!);
      this.v[0]!.assign(v1!);
    });
  }

  /**
   * A copy of the state as plain data, read asynchronously (works on every backend). Every read
   * starts at the call, so the copy is the state at the call.
   */
  async getState(): Promise<AdamState> {
    const step = this.t;
    const moments = await readFloats([...this.m, ...this.v]);
    if (this.fused) {
      return { step, m: this.split(moments[0]!), v: this.split(moments[1]!) };
    }
    return { step, m: moments.slice(0, this.m.length), v: moments.slice(this.m.length) };
  }

  /** A flat moment cut into one array per variable. */
  private split(flat: Float32Array): Float32Array[] {
    let o = 0;
    return this.sizes.map((n) => {
      const part = flat.slice(o, o + n);
      o += n;
      return part;
    });
  }

  /** Restores a state from {@link Adam.getState} (sizes must match the variables). */
  setState(state: AdamState): void {
    if (state.m.length !== this.variables.length || state.v.length !== this.variables.length) {
      throw new CheckpointMismatchError(
        `optimiser has ${this.variables.length} variables, state has ${state.m.length}.`,
      );
    }
    this.sizes.forEach((size, i) => {
      const src = state.m[i]!;
      if (src.length !== size || state.v[i]!.length !== size) {
        throw new CheckpointMismatchError(
          `optimiser moment ${i} has size ${src.length}, expected ${size}.`,
        );
      }
    });
    tf.tidy(() => {
      if (this.fused) {
        this.m[0]!.assign(tf.tensor1d(concat(state.m), 'float32'));
        this.v[0]!.assign(tf.tensor1d(concat(state.v), 'float32'));
      } else {
        this.m.forEach((x, i) => {
          x.assign(tf.tensor(state.m[i]!, x.shape, 'float32'));
        });
        this.v.forEach((x, i) => {
          x.assign(tf.tensor(state.v[i]!, x.shape, 'float32'));
        });
      }
    });
    this.t = state.step;
  }

  /** Frees the moment variables. */
  dispose(): void {
    for (const x of [...this.m, ...this.v]) x.dispose();
  }
}

/** The clip coefficient of `clip`: a number when its norm was read, else a scalar tensor. */
function coefficientOf(clip: GradClip): number | tf.Scalar {
  if (typeof clip.norm === 'number') return clipCoefficient(clip.norm, clip.maxNorm);
  if (clip.maxNorm === null || clip.maxNorm === 0) return 1;
  return tf.minimum(1, tf.div(clip.maxNorm, tf.add(clip.norm, 1e-6))) as tf.Scalar;
}

/** Arrays one after the other. */
function concat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
