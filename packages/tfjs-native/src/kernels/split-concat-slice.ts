import type { KernelFunc, TensorInfo } from '@tensorflow/tfjs-core';
import * as tf from '@tensorflow/tfjs-core';
import { heap, heapOffset } from '../wasm-heap.js';
import { copyBlocks, span, wordBackend } from './block-copy.js';
import { type KernelArgs, type KernelContext, runStock } from './kernel-context.js';

function normAxis(axis: number, rank: number): number {
  return axis < 0 ? axis + rank : axis;
}

/** Sizes of the parts of `dim` for `numOrSizeSplits`, or null when they do not add up. */
function splitSizes(dim: number, spec: number | number[]): number[] | null {
  if (typeof spec === 'number') {
    return spec > 0 && dim % spec === 0 ? new Array<number>(spec).fill(dim / spec) : null;
  }
  const free = spec.filter((s) => s === -1).length;
  if (free > 1 || spec.some((s) => s < -1)) return null;
  const known = spec.reduce((p, s) => (s === -1 ? p : p + s), 0);
  const sizes = spec.map((s) => (s === -1 ? dim - known : s));
  return sizes.every((s) => s >= 0) && sizes.reduce((p, s) => p + s, 0) === dim ? sizes : null;
}

/**
 * Copy between a tensor and its parts along one axis, all at word offsets into `words`: the
 * tensor is `outer` rows of `Σ sizes · inner` words, part i is `outer` rows of `sizes[i] · inner`
 * words holding the next `sizes[i]` units of each row. `split` copies the tensor into the parts,
 * otherwise the parts into the tensor.
 */
function copyAlongAxis(
  words: Int32Array,
  whole: number,
  parts: number[],
  sizes: number[],
  outer: number,
  inner: number,
  split: boolean,
): void {
  const row = sizes.reduce((p, s) => p + s, 0) * inner;
  let offset = 0;
  sizes.forEach((s, i) => {
    const at = whole + offset * inner;
    if (split) copyBlocks(words, at, row, parts[i]!, s * inner, outer, s * inner);
    else copyBlocks(words, parts[i]!, s * inner, at, row, outer, s * inner);
    offset += s;
  });
}

/**
 * `SplitV` as block copies in the heap. The stock wasm kernel slices each part with strides: on a
 * [1016, 1376] input split in two along the last axis it took about 13 ms.
 */
export function splitKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo[] => {
    const { x } = args.inputs;
    const backend = x ? wordBackend(args.backend, [x]) : null;
    const rank = x?.shape.length ?? 0;
    const axis = normAxis(Number(args.attrs?.axis ?? 0), rank);
    const sizes =
      x && axis >= 0 && axis < rank
        ? splitSizes(x.shape[axis]!, args.attrs?.numOrSizeSplits as number | number[])
        : null;
    if (!x || !backend || !sizes) {
      return ctx.stock!.kernelFunc(args) as TensorInfo[];
    }
    const outs = sizes.map((s) => {
      const shape = x.shape.slice();
      shape[axis] = s;
      return backend.makeOutput(shape, x.dtype);
    });
    const words = new Int32Array(heap(backend).buffer);
    const parts = outs.map((t) => heapOffset(backend, t) >>> 2);
    const [outer, inner] = [span(x.shape, 0, axis), span(x.shape, axis + 1)];
    copyAlongAxis(words, heapOffset(backend, x) >>> 2, parts, sizes, outer, inner, true);
    return outs;
  };
}

/** `Concat` as block copies in the heap (the gradient of `SplitV`). */
export function concatKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const tensors = Object.values(args.inputs).filter((t): t is TensorInfo => t !== undefined);
    const first = tensors[0];
    const backend = wordBackend(args.backend, tensors);
    const rank = first?.shape.length ?? 0;
    const axis = normAxis(Number(args.attrs?.axis ?? 0), rank);
    const fits =
      first !== undefined &&
      axis >= 0 &&
      axis < rank &&
      tensors.every(
        (t) =>
          t.dtype === first.dtype &&
          t.shape.length === rank &&
          t.shape.every((d, i) => i === axis || d === first.shape[i]),
      );
    if (!first || !backend || !fits) return runStock(ctx, args, 'this Concat input');
    const total = tensors.reduce((p, t) => p + t.shape[axis]!, 0);
    const shape = first.shape.slice();
    shape[axis] = total;
    const out = backend.makeOutput(shape, first.dtype);
    const words = new Int32Array(heap(backend).buffer);
    const parts = tensors.map((t) => heapOffset(backend, t) >>> 2);
    const sizes = tensors.map((t) => t.shape[axis]!);
    const [outer, inner] = [span(shape, 0, axis), span(shape, axis + 1)];
    copyAlongAxis(words, heapOffset(backend, out) >>> 2, parts, sizes, outer, inner, false);
    return out;
  };
}

/** `Slice` as block copies in the heap: trailing whole axes merge into one contiguous block. */
export function sliceKernel(ctx: KernelContext): KernelFunc {
  return (args: KernelArgs): TensorInfo => {
    const { x } = args.inputs;
    const backend = x ? wordBackend(args.backend, [x]) : null;
    if (!x || !backend || x.shape.length === 0) return runStock(ctx, args, 'this Slice input');
    let begin: number[];
    let size: number[];
    try {
      [begin, size] = tf.slice_util.parseSliceParams(
        x,
        args.attrs?.begin as number[],
        args.attrs?.size as number[],
      ) as [number[], number[]];
    } catch {
      return runStock(ctx, args, 'these Slice parameters');
    }
    const shape = x.shape;
    const rank = shape.length;
    if (begin.some((b, i) => b < 0 || b + size[i]! > shape[i]!)) {
      return runStock(ctx, args, 'a Slice outside the input');
    }
    const out = backend.makeOutput(size, x.dtype);
    if (size.some((d) => d === 0)) return out;
    // Axis k is the outermost axis of the contiguous block: every axis after it is taken whole.
    let k = rank - 1;
    while (k > 0 && size[k] === shape[k]) k--;
    const inner = span(shape, k + 1);
    const block = size[k]! * inner;
    const words = new Int32Array(heap(backend).buffer);
    const src = (heapOffset(backend, x) >>> 2) + begin[k]! * inner;
    const dst = heapOffset(backend, out) >>> 2;
    // Odometer over the axes before k, with the last of them handled as strided rows.
    const strides = shape.map((_, i) => span(shape, i + 1));
    if (k === 0) {
      copyBlocks(words, src, block, dst, block, 1, block);
      return out;
    }
    const rowAxis = k - 1;
    const rows = size[rowAxis]!;
    const lead = span(size, 0, rowAxis);
    const counter = new Array<number>(rowAxis).fill(0);
    for (let l = 0; l < lead; l++) {
      let from = src + begin[rowAxis]! * strides[rowAxis]!;
      for (let a = 0; a < rowAxis; a++) from += (begin[a]! + counter[a]!) * strides[a]!;
      copyBlocks(words, from, strides[rowAxis]!, dst + l * rows * block, block, rows, block);
      for (let a = rowAxis - 1; a >= 0; a--) {
        counter[a]! += 1;
        if (counter[a]! < size[a]!) break;
        counter[a] = 0;
      }
    }
    return out;
  };
}
