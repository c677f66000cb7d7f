import * as tf from '@tensorflow/tfjs-core';
import { elementwise, type GpuProgram } from './programs.js';

/*
 * Optimiser steps over many tensors in a constant number of GPU programs. The tensors of a step
 * (parameters, gradients) are packed into one flat buffer by buffer-to-buffer copies, which are
 * not GPU programs; one elementwise program updates the flat parameters and moments, computing
 * the gradient-norm clip coefficient from a norm that stays on the GPU; copies unpack the result
 * into tensors of the original shapes. Each is a TF.js kernel of the webgpu backend: a library
 * calls it by name (`MULTI_TENSOR_KERNELS`) when the active backend has it, and keeps its own
 * per-tensor path elsewhere, so CPU backends compute what they always did.
 */

/** Names of the multi-tensor kernels registered for the webgpu backend. */
export const MULTI_TENSOR_KERNELS = {
  /** float32 tensors (or int32 ones, all int32) → their values one after the other, [Σ sizes]
   * of their dtype (copies, no program). */
  pack: 'PoadPackFlat',
  /** [Σ sizes] → tensors of `shapes` (attribute), in order (copies, no program). */
  unpack: 'PoadUnpackFlat',
  /** AdamW on flat p, g, m, v with a norm [1] for the clip coefficient → p', m', v' (a norm
   * that is not finite: p, m, v unchanged). */
  adamW: 'PoadAdamW',
  /** Lion on flat p, g, m with a norm [1] for the clip coefficient → p', m' (a norm that is not
   * finite: p, m unchanged). */
  lion: 'PoadLion',
} as const;

/** What the kernels use of tfjs-backend-webgpu's backend (its buffers and command encoder). */
export interface Backend {
  tensorMap: { get(dataId: object): { resource?: unknown; values?: unknown } };
  commandQueueOwnedIds: WeakSet<object>;
  commandEncoder: {
    copyBufferToBuffer(
      src: unknown,
      srcOffset: number,
      dst: unknown,
      dstOffset: number,
      size: number,
    ): void;
  };
  makeTensorInfo(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  uploadToGPU(dataId: object): void;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  disposeData(dataId: object): void;
  runWebGPUProgram(
    program: GpuProgram,
    inputs: tf.TensorInfo[],
    dtype: tf.DataType,
    uniforms?: Array<{ type: string; data: number[] }>,
  ): tf.TensorInfo;
}

const sizeOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function checkFloat(op: string, xs: readonly tf.TensorInfo[]): void {
  for (const [i, x] of xs.entries()) {
    if (x.dtype !== 'float32')
      throw new TypeError(`${op}: input ${i} is ${x.dtype}; only float32 tensors are packed`);
  }
}

/**
 * Records copies of `count` float32 values from one tensor at an element offset into another at
 * an element offset, after every command recorded so far (in the backend's command encoder).
 */
export function copy(
  b: Backend,
  moves: readonly {
    from: tf.TensorInfo;
    fromOffset: number;
    to: tf.TensorInfo;
    toOffset: number;
    count: number;
  }[],
): void {
  for (const m of moves) {
    b.uploadToGPU(m.from.dataId);
    b.uploadToGPU(m.to.dataId);
  }
  b.ensureCommandEncoderReady();
  b.endComputePassEncoder();
  for (const m of moves) {
    if (m.count === 0) continue;
    b.commandEncoder.copyBufferToBuffer(
      b.tensorMap.get(m.from.dataId).resource,
      m.fromOffset * 4,
      b.tensorMap.get(m.to.dataId).resource,
      m.toOffset * 4,
      m.count * 4,
    );
    // Their buffers are not released before the copies are submitted.
    b.commandQueueOwnedIds.add(m.from.dataId);
    b.commandQueueOwnedIds.add(m.to.dataId);
  }
}

function pack(b: Backend, xs: readonly tf.TensorInfo[]): tf.TensorInfo {
  // int32 tensors pack too, all of them int32 (ids read back beside bit-cast floats).
  const int = xs.length > 0 && xs.every((x) => x.dtype === 'int32');
  if (!int) checkFloat(MULTI_TENSOR_KERNELS.pack, xs);
  const total = xs.reduce((s, x) => s + sizeOf(x.shape), 0);
  const out = b.makeTensorInfo([total], int ? 'int32' : 'float32');
  let offset = 0;
  copy(
    b,
    xs.map((x) => {
      const count = sizeOf(x.shape);
      const move = { from: x, fromOffset: 0, to: out, toOffset: offset, count };
      offset += count;
      return move;
    }),
  );
  return out;
}

/** `flat` cut into float32 tensors of `shapes`, in order, by buffer copies (no GPU program). */
export function unpackInto(
  b: Backend,
  flat: tf.TensorInfo,
  shapes: readonly number[][],
): tf.TensorInfo[] {
  return unpack(b, flat, shapes);
}

function unpack(b: Backend, flat: tf.TensorInfo, shapes: readonly number[][]): tf.TensorInfo[] {
  checkFloat(MULTI_TENSOR_KERNELS.unpack, [flat]);
  const total = shapes.reduce((s, sh) => s + sizeOf(sh), 0);
  if (total !== sizeOf(flat.shape)) {
    throw new RangeError(
      `${MULTI_TENSOR_KERNELS.unpack}: the shapes hold ${total} values, the flat tensor ${sizeOf(flat.shape)}`,
    );
  }
  const outs = shapes.map((sh) => b.makeTensorInfo([...sh], 'float32'));
  let offset = 0;
  copy(
    b,
    outs.map((to, i) => {
      const count = sizeOf(shapes[i]!);
      const move = { from: flat, fromOffset: offset, to, toOffset: 0, count };
      offset += count;
      return move;
    }),
  );
  return outs;
}

/**
 * The clip coefficient min(1, maxNorm / (norm + 1e-6)) of PyTorch's clip_grad_norm_; 1 when off.
 * A norm that is not finite (NaN or ±∞: its exponent bits all set) skips the step: each output is
 * its input (`kept`), so a caller can fold its own checks into the norm (`norm + 0·x` is NaN when
 * x is not finite, and exactly `norm` otherwise) and let the device decide whether the step is
 * taken.
 */
const clipOrKeep = (kept: string) => `
          if ((bitcast<u32>(norm[0]) & 0x7f800000u) == 0x7f800000u) {
            ${kept}
            return;
          }
          var coef = 1.0;
          if (uniforms.maxNorm > 0.0) { coef = min(1.0, uniforms.maxNorm / (norm[0] + 1e-6)); }`;

/**
 * AdamW over flat [L] p, g, m, v, as `@poad/ppo`'s Adam computes it per tensor, into [3L]
 * (p', then m', then v'): g ← g·coef; p ← p·decay; m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²;
 * p ← p − (m / (√v / bc2 + ε)) · lrOverBc1. A norm that is not finite leaves p, m and v as they are.
 */
function adamWProgram(length: number): GpuProgram {
  return elementwise(
    'poad_adamw',
    ['p', 'g', 'm', 'v', 'norm'],
    [3 * length],
    `
          let n = uniforms.len;
          let part = index / n;
          let i = index - part * n;
          ${clipOrKeep('if (part == 1) { result[index] = m[i]; } else if (part == 2) { result[index] = v[i]; } else { result[index] = p[i]; }')}
          let gi = g[i] * coef;
          let m1 = m[i] * uniforms.beta1 + gi * uniforms.oneMinusBeta1;
          let v1 = v[i] * uniforms.beta2 + (gi * gi) * uniforms.oneMinusBeta2;
          if (part == 1) {
            result[index] = m1;
          } else if (part == 2) {
            result[index] = v1;
          } else {
            var pi = p[i];
            if (uniforms.decay != 1.0) { pi = pi * uniforms.decay; }
            let denom = sqrt(v1) / uniforms.bc2 + uniforms.eps;
            result[index] = pi - (m1 / denom) * uniforms.lrOverBc1;
          }`,
    'len : i32, maxNorm : f32, beta1 : f32, oneMinusBeta1 : f32, beta2 : f32, oneMinusBeta2 : f32, decay : f32, bc2 : f32, eps : f32, lrOverBc1 : f32,',
  );
}

/**
 * Lion over flat [L] p, g, m, as `@poad/etpo`'s Lion computes it per tensor, into [2L] (p', then
 * m'): g ← g·coef; c = β1·m + (1−β1)·g; p ← p·decay − sign(c)·lr; m ← β2·m + (1−β2)·g. A norm
 * that is not finite leaves p and m as they are.
 */
function lionProgram(length: number): GpuProgram {
  return elementwise(
    'poad_lion',
    ['p', 'g', 'm', 'norm'],
    [2 * length],
    `
          let n = uniforms.len;
          let part = index / n;
          let i = index - part * n;
          ${clipOrKeep('if (part == 1) { result[index] = m[i]; } else { result[index] = p[i]; }')}
          let gi = g[i] * coef;
          if (part == 1) {
            result[index] = m[i] * uniforms.beta2 + gi * uniforms.oneMinusBeta2;
          } else {
            let c = m[i] * uniforms.beta1 + gi * uniforms.oneMinusBeta1;
            var pi = p[i];
            if (uniforms.decay != 1.0) { pi = pi * uniforms.decay; }
            result[index] = pi - sign(c) * uniforms.lr;
          }`,
    'len : i32, maxNorm : f32, beta1 : f32, oneMinusBeta1 : f32, beta2 : f32, oneMinusBeta2 : f32, decay : f32, lr : f32,',
  );
}

const f32 = (data: number[]) => ({ type: 'float32', data });
const i32 = (data: number[]) => ({ type: 'int32', data });

function checkFlat(op: string, xs: readonly tf.TensorInfo[], length: number): void {
  checkFloat(op, xs);
  for (const [i, x] of xs.entries()) {
    if (sizeOf(x.shape) !== length)
      throw new RangeError(`${op}: input ${i} has ${sizeOf(x.shape)} values, expected ${length}`);
  }
}

/** Runs `program` over the flat inputs and cuts its [k·L] output into k tensors [L]. */
function runAndSplit(
  b: Backend,
  program: GpuProgram,
  inputs: tf.TensorInfo[],
  uniforms: Array<{ type: string; data: number[] }>,
  parts: number,
  length: number,
): tf.TensorInfo[] {
  const packed = b.runWebGPUProgram(program, inputs, 'float32', uniforms);
  const outs = unpack(
    b,
    packed,
    Array.from({ length: parts }, () => [length]),
  );
  b.disposeData(packed.dataId);
  return outs;
}

/** What a kernel function of a table receives. */
export type KernelArgs = {
  inputs: tf.NamedTensorInfoMap;
  backend: object;
  attrs?: tf.NamedAttrMap;
};

/**
 * A fused optimiser step over flat tensors: the `state` inputs (p, g, then the moments) and the
 * norm [1] run through `program` with the uniforms L, maxNorm, β1, 1 − β1, β2, 1 − β2, decay and
 * the `rest` of the attributes; the result is cut into p' and the moments'.
 */
function optimiserStep(
  name: string,
  { inputs, backend, attrs }: KernelArgs,
  state: string[],
  program: (length: number) => GpuProgram,
  rest: (a: Record<string, number>) => number[],
): tf.TensorInfo[] {
  const xs = state.map((key) => inputs[key]!);
  const L = sizeOf(xs[0]!.shape);
  checkFlat(name, xs, L);
  const a = attrs as Record<string, number>;
  const shared = [a.maxNorm!, a.beta1!, 1 - a.beta1!, a.beta2!, 1 - a.beta2!, a.decay!];
  const uniforms = [i32([L]), ...[...shared, ...rest(a)].map((x) => f32([x]))];
  return runAndSplit(
    backend as Backend,
    program(L),
    [...xs, inputs.norm!],
    uniforms,
    xs.length - 1,
    L,
  );
}

const KERNELS: Record<string, (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]> = {
  [MULTI_TENSOR_KERNELS.pack]: ({ inputs, backend }) =>
    pack(backend as Backend, Object.values(inputs) as tf.TensorInfo[]),
  [MULTI_TENSOR_KERNELS.unpack]: ({ inputs, backend, attrs }) =>
    unpack(backend as Backend, inputs.flat!, (attrs?.shapes ?? []) as number[][]),
  [MULTI_TENSOR_KERNELS.adamW]: (args) =>
    optimiserStep(MULTI_TENSOR_KERNELS.adamW, args, ['p', 'g', 'm', 'v'], adamWProgram, (a) => [
      a.bc2!,
      a.eps!,
      a.lrOverBc1!,
    ]),
  [MULTI_TENSOR_KERNELS.lion]: (args) =>
    optimiserStep(MULTI_TENSOR_KERNELS.lion, args, ['p', 'g', 'm'], lionProgram, (a) => [a.lr!]),
};

/** Registers a table of kernels for the webgpu backend, skipping names already registered. */
export function registerWebGpuKernelTable(
  kernels: Record<string, (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]>,
): void {
  for (const [kernelName, kernelFunc] of Object.entries(kernels)) {
    if (tf.getKernel(kernelName, 'webgpu')) continue;
    tf.registerKernel({
      kernelName,
      backendName: 'webgpu',
      kernelFunc: kernelFunc as tf.KernelFunc,
    });
  }
}

/** Registers the multi-tensor kernels for the webgpu backend (idempotent). */
export function registerMultiTensorKernels(): void {
  registerWebGpuKernelTable(KERNELS);
}
