import { readTensors, registerGradients } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { ModelConfigError } from './errors.js';
import type { ValueFeatures } from './features.js';
import { trainableMatMul } from './linear.js';
import { SeededRng } from './rng.js';
import { toVariable } from './variable.js';
import { type HostTensor, transposeHost } from './weights.js';

/** Options of the critic head. */
export interface ValueHeadOptions {
  /** Hidden layer widths between the model's hidden size and the scalar output. Default [1024, 512]. */
  hiddenSizes?: number[];
  /**
   * The hidden states it reads (`ValueFeatures`): `last` (default), the final hidden state, or
   * `layers`, every layer's, which makes its input `numLayers × hidden` wide.
   */
  features?: ValueFeatures;
}

/** Checkpoint key of the i-th linear layer, matching a PyTorch `nn.Sequential` named `v_head`. */
export function valueHeadKey(i: number): string {
  return `v_head.${2 * i}.weight`;
}

/**
 * The critic: an MLP hidden→1024→512→1 with ReLU and no biases, applied to the frozen base
 * model's final hidden states (or every layer's, see {@link ValueHeadOptions.features}). Only
 * these weights learn. Layers are initialised like PyTorch's `nn.Linear` (U(±1/√in)) from a seed.
 */
export class ValueHead {
  /** Layer widths, input first: e.g. [hidden, 1024, 512, 1]. */
  readonly sizes: number[];
  /** Kernels in TF.js layout [in, out]. */
  readonly kernels: tf.Variable[];
  /** The hidden states it reads. */
  readonly features: ValueFeatures;

  private constructor(sizes: number[], kernels: tf.Variable[], features: ValueFeatures) {
    this.sizes = sizes;
    this.kernels = kernels;
    this.features = features;
  }

  /** A freshly initialised head for features of width `inputSize` (the kind `opts.features` says). */
  static create(inputSize: number, opts: ValueHeadOptions = {}, seed = 0): ValueHead {
    const sizes = [inputSize, ...(opts.hiddenSizes ?? [1024, 512]), 1];
    for (const s of sizes) {
      if (!Number.isInteger(s) || s <= 0) {
        throw new ModelConfigError(
          'valueHead.hiddenSizes',
          `sizes must be positive integers, got ${s}`,
        );
      }
    }
    const rng = new SeededRng(seed);
    const kernels: tf.Variable[] = [];
    for (let i = 0; i + 1 < sizes.length; i++) {
      const inD = sizes[i] as number;
      const outD = sizes[i + 1] as number;
      const data = rng.fillUniform(new Float32Array(inD * outD), 1 / Math.sqrt(inD));
      kernels.push(toVariable(tf.tensor2d(data, [inD, outD])));
    }
    return new ValueHead(sizes, kernels, opts.features ?? 'last');
  }

  /**
   * Build from PyTorch-layout tensors `v_head.{0,2,4,...}.weight` ([out, in]) whose input is
   * `inputSize` wide, features of the kind `features` says (default `last`).
   * Throws `ModelConfigError` naming the tensor when one is missing or inconsistent.
   */
  static fromHost(
    tensors: ReadonlyMap<string, HostTensor>,
    inputSize: number,
    features: ValueFeatures = 'last',
  ): ValueHead {
    const sizes = [inputSize];
    const kernels: tf.Variable[] = [];
    try {
      for (let i = 0; ; i++) {
        const t = tensors.get(valueHeadKey(i));
        if (!t) break;
        const [outD, inD] = t.shape as [number, number];
        if (t.shape.length !== 2 || inD !== sizes[sizes.length - 1]) {
          throw new ModelConfigError(
            valueHeadKey(i),
            `shape [${t.shape.join(', ')}] does not chain: expected [*, ${sizes[sizes.length - 1]}]`,
          );
        }
        kernels.push(toVariable(tf.tensor2d(transposeHost(t.data, outD, inD), [inD, outD])));
        sizes.push(outD);
      }
      if (kernels.length === 0) {
        throw new ModelConfigError(valueHeadKey(0), 'value head tensor missing');
      }
      if (sizes[sizes.length - 1] !== 1) {
        throw new ModelConfigError(
          valueHeadKey(kernels.length - 1),
          `last layer must have 1 output, got ${sizes[sizes.length - 1]}`,
        );
      }
    } catch (e) {
      for (const k of kernels) k.dispose();
      throw e;
    }
    return new ValueHead(sizes, kernels, features);
  }

  /** Values for feature rows [n, hidden] → [n]. Differentiable w.r.t. the head's kernels. */
  apply(features: tf.Tensor2D): tf.Tensor1D {
    registerGradients();
    return tf.tidy(() => {
      let h: tf.Tensor2D = features;
      this.kernels.forEach((k, i) => {
        h = trainableMatMul(h, k as unknown as tf.Tensor2D);
        if (i + 1 < this.kernels.length) h = tf.relu(h);
      });
      return tf.reshape(h, [-1]) as tf.Tensor1D;
    });
  }

  /** Trainable variables (the kernels). */
  variables(): tf.Variable[] {
    return [...this.kernels];
  }

  /** PyTorch-layout host tensors keyed `v_head.{0,2,4}.weight`, read asynchronously. */
  async toHost(): Promise<Map<string, HostTensor>> {
    // All kernels in one read (one host read on webgpu).
    const data = await readTensors(this.kernels);
    const out = new Map<string, HostTensor>();
    this.kernels.forEach((k, i) => {
      const [inD, outD] = k.shape as [number, number];
      out.set(valueHeadKey(i), {
        dtype: 'F32',
        shape: [outD, inD],
        data: transposeHost(data[i] as Float32Array, inD, outD),
      });
    });
    return out;
  }

  /** Free the kernels. */
  dispose(): void {
    for (const k of this.kernels) k.dispose();
  }
}
