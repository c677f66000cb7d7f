import * as tf from '@tensorflow/tfjs-core';
import { concatInto } from './concat.js';
import { CheckpointMismatchError } from './errors.js';
import { clipCoefficient } from './grad-clip.js';
import {
  assignFlat,
  clipInputs,
  type GradClip,
  multiTensorKernels,
  packFlat,
} from './multi-tensor.js';
import { readFloats } from './read-floats.js';

/** An optimiser's state as plain data: its step count and moments, one array per variable. */
export interface OptimizerState {
  /** Updates taken so far. */
  step: number;
  /** First moments (variable order). */
  m: Float32Array[];
  /** Second moments (variable order; empty for a rule that keeps one moment). */
  v: Float32Array[];
}

/** What every {@link MomentOptimizer} takes. */
export interface MomentOptimizerOptions {
  /** Learning rate. */
  lr: number;
  /** Decoupled weight decay (0: none). */
  weightDecay?: number;
  /**
   * Step all variables at once with the backend's multi-tensor kernels where the active backend
   * has them (webgpu with `@poad/tfjs-kernels`): a constant number of GPU programs per step
   * instead of a dozen per variable, equal to the per-variable step within float rounding.
   * Default true; other backends always step per variable.
   */
  fused?: boolean;
}

/**
 * The plumbing an optimiser with per-variable moments needs, written once: the moment variables
 * (one tensor per trainable variable, or one flat tensor per moment in {@link fused} mode), the
 * step count, the clip coefficient, the fused path through the multi-tensor kernels, and the
 * state as plain data (saved and restored exactly). A subclass says how many moments it keeps
 * and writes its update rule twice: per variable ({@link updateOne}) and as one multi-tensor
 * kernel over flat tensors ({@link fusedKernel}); `@poad/ppo`'s `Adam` and `@poad/etpo`'s `Lion`
 * are the two.
 */
export abstract class MomentOptimizer<S extends OptimizerState = OptimizerState> {
  /** Moments by kind (Adam: m, v; Lion: m), each per variable or one flat tensor. */
  protected readonly moments: tf.Variable[][];
  /** Steps taken (the t of the bias corrections). */
  protected t = 0;
  /** Current learning rate (may be changed between steps, e.g. for a schedule). */
  lr: number;
  protected readonly weightDecay: number;
  /**
   * True when the steps run as one multi-tensor program over flat copies of the variables (see
   * {@link MomentOptimizerOptions.fused}); the moments are then kept flat, in variable order.
   */
  readonly fused: boolean;
  private readonly sizes: number[];

  constructor(
    /** The variables this optimiser updates. */
    readonly variables: readonly tf.Variable[],
    options: MomentOptimizerOptions,
    /** How many moments of each variable the rule keeps. */
    momentCount: number,
  ) {
    this.lr = options.lr;
    this.weightDecay = options.weightDecay ?? 0;
    this.sizes = variables.map((x) => x.size);
    this.fused =
      (options.fused ?? true) &&
      multiTensorKernels() &&
      variables.length > 0 &&
      variables.every((x) => x.dtype === 'float32');
    const total = this.sizes.reduce((a, b) => a + b, 0);
    // tidy frees the zeros each variable is made from (a variable copies its initial value).
    const zeros = (x: tf.Tensor) => tf.tidy(() => tf.variable(tf.zerosLike(x), false));
    const flatZeros = () => tf.tidy(() => tf.variable(tf.zeros([total]), false));
    this.moments = Array.from({ length: momentCount }, () =>
      this.fused ? [flatZeros()] : variables.map(zeros),
    );
  }

  /** Number of steps taken. */
  get stepCount(): number {
    return this.t;
  }

  /** The per-variable rule: updates `p` and its `moments` (in place, by assignment) from `g`. */
  protected abstract updateOne(p: tf.Variable, g: tf.Tensor, moments: readonly tf.Variable[]): void;

  /**
   * The rule over flat tensors as one multi-tensor kernel: from the flat parameters `p`, gradients
   * `g`, moments and the clip inputs, the new flat parameters followed by the new moments.
   */
  protected abstract fusedKernel(
    p: tf.Tensor1D,
    g: tf.Tensor1D,
    moments: readonly tf.Variable[],
    clip: { norm: tf.Tensor1D; maxNorm: number },
  ): tf.Tensor[];

  /**
   * One update with `grads[i]` for `variables[i]` (`null` = zero gradient), the gradients first
   * multiplied by the clip coefficient of `clip` when given. Does not dispose the gradients.
   */
  step(grads: readonly (tf.Tensor | null)[], clip?: GradClip): void {
    if (grads.length !== this.variables.length) {
      throw new RangeError(
        `${this.constructor.name}.step(grads): expected ${this.variables.length} gradients, got ${grads.length}.`,
      );
    }
    this.t += 1;
    if (this.fused) {
      tf.tidy(() => {
        const p = packFlat(this.variables);
        const g = packFlat(this.variables.map((x, i) => grads[i] ?? tf.zerosLike(x)));
        const flats = this.moments.map((k) => k[0]!);
        const [p1, ...m1] = this.fusedKernel(p, g, flats, clipInputs(clip));
        assignFlat(this.variables, p1!);
        flats.forEach((m, k) => {
          m.assign(m1[k]!);
        });
      });
      return;
    }
    tf.tidy(() => {
      const coef = clip === undefined ? null : coefficientOf(clip);
      this.variables.forEach((p, i) => {
        const raw = grads[i] ?? null;
        const g = raw === null ? tf.zerosLike(p) : coef === null ? raw : tf.mul(raw, coef);
        this.updateOne(
          p,
          g,
          this.moments.map((k) => k[i]!),
        );
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
        `${this.constructor.name}.stepSkippedOnDevice(): only a fused optimiser skips steps on the device, after a step`,
      );
    }
    this.t -= 1;
  }

  /** The state as plain data from the step count and the moments by kind (one array per variable). */
  protected abstract stateOf(step: number, moments: Float32Array[][]): S;

  /** The moments by kind of a state, or an error when the state is not this optimiser's kind. */
  protected abstract momentsOf(state: S): readonly (readonly Float32Array[])[];

  /**
   * A copy of the step count and every moment of every variable as plain data (one array per
   * variable, in variable order), read asynchronously (works on every backend). Every read starts
   * at the call, so the copy is the state at the call.
   */
  async getState(): Promise<S> {
    const step = this.t;
    const read = await readFloats(this.moments.flat());
    const per = this.fused ? 1 : this.variables.length;
    const moments = this.moments.map((_, k) => {
      const part = read.slice(k * per, (k + 1) * per);
      return this.fused ? this.split(part[0]!) : part;
    });
    return this.stateOf(step, moments);
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

  /**
   * Checks that `state` fits these variables (its kind, and every moment's count and size)
   * without changing anything.
   * @throws CheckpointMismatchError naming the first moment whose count or size differs.
   */
  checkState(state: S): void {
    this.momentsOf(state).forEach((kind, k) => {
      if (kind.length !== this.variables.length) {
        throw new CheckpointMismatchError(
          `optimiser has ${this.variables.length} variables, state has ${kind.length}.`,
        );
      }
      this.sizes.forEach((size, i) => {
        if (kind[i]!.length !== size) {
          throw new CheckpointMismatchError(
            `optimiser moment ${k === 0 ? 'm' : 'v'}[${i}] has size ${kind[i]!.length}, expected ${size}.`,
          );
        }
      });
    });
  }

  /**
   * Restores a state from {@link getState} after {@link checkState}, so that a mismatched state
   * changes nothing.
   */
  setState(state: S): void {
    this.checkState(state);
    const moments = this.momentsOf(state);
    tf.tidy(() => {
      this.moments.forEach((vars, k) => {
        const src = moments[k]!;
        if (this.fused) {
          const total = src.reduce((n, p) => n + p.length, 0);
          vars[0]!.assign(tf.tensor1d(concatInto(new Float32Array(total), src), 'float32'));
        } else {
          vars.forEach((x, i) => {
            x.assign(tf.tensor(src[i]!, x.shape, 'float32'));
          });
        }
      });
    });
    this.t = state.step;
  }

  /** Frees the moment variables. */
  dispose(): void {
    for (const x of this.moments.flat()) x.dispose();
  }
}

/** The clip coefficient of `clip`: a number when its norm was read, else a scalar tensor. */
function coefficientOf(clip: GradClip): number | tf.Scalar {
  if (typeof clip.norm === 'number') return clipCoefficient(clip.norm, clip.maxNorm);
  if (clip.maxNorm === null || clip.maxNorm === 0) return 1;
  return tf.minimum(1, tf.div(clip.maxNorm, tf.add(clip.norm, 1e-6))) as tf.Scalar;
}
