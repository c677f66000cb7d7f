import * as tf from '@tensorflow/tfjs-core';
import type { PackedDtype } from './webgpu/packed.js';

export type { PackedDtype } from './webgpu/packed.js';

/*
 * Frozen weights kept in their checkpoint's 16-bit precision (bfloat16 or float16) on webgpu: an
 * int32 tensor [rows, cols/2] holds two values per element, (r, 2c) in the low 16 bits and
 * (r, 2c + 1) in the high 16 bits (the bytes of a little-endian Uint16Array of the values, so a
 * host packs by viewing its 16-bit array as 32-bit words). The ops below unpack inside their WGSL
 * programs and accumulate in float32; they run on the webgpu backend only.
 */

/** Names of the packed-weight kernels (webgpu). */
export const PACKED_KERNELS = {
  matMul: 'PoadGpuPackedMatMul',
  gather: 'PoadGpuPackedGather',
  unpack: 'PoadGpuUnpack',
  pack: 'PoadGpuPack',
  randomNormal: 'PoadGpuRandomPacked',
} as const;

/** Whether the active backend runs the packed-weight ops (webgpu). */
export function packedWeightsSupported(): boolean {
  return tf.getBackend() === 'webgpu';
}

/** Throws unless the active backend runs the packed ops; `fix` ends the message. */
function requireWebGpu(op: string, dtype: PackedDtype, fix = ''): void {
  if (!packedWeightsSupported()) {
    throw new RangeError(
      `${op}: packed ${dtype} weights run on the webgpu backend only (active: ${tf.getBackend()})${fix}`,
    );
  }
}

function checkPacked(op: string, w: tf.Tensor, dtype: PackedDtype): void {
  requireWebGpu(op, dtype, '; load the weights as float32 there');
  if (w.dtype !== 'int32' || w.rank !== 2) {
    throw new RangeError(
      `${op}: a packed weight is an int32 [rows, cols/2] tensor, got ${w.dtype} [${w.shape}]`,
    );
  }
}

/** Throws unless x's columns equal the (transposed) weight's `wk` rows; `weight` describes it. */
function checkInner(
  op: string,
  x: tf.Tensor2D,
  wk: number,
  transposed: boolean,
  weight: string,
): void {
  const [, k] = x.shape;
  if (k !== wk) {
    throw new RangeError(
      `${op}: x [${x.shape}] has ${k} columns, the ${transposed ? 'transposed ' : ''}weight ${weight} ${wk} rows`,
    );
  }
}

/**
 * `x · W` for a packed W [k, n] (stored [k, n/2]); with `transposed`, `x · Wᵀ` for a packed
 * W [n, k] (stored [n, k/2]). Differentiable in x (W is a constant): the input gradient is the
 * other form. One tiled WGSL program each way.
 */
export function packedMatMul(
  x: tf.Tensor2D,
  w: tf.Tensor2D,
  dtype: PackedDtype,
  transposed = false,
): tf.Tensor2D {
  checkPacked('packedMatMul', w, dtype);
  const wk = transposed ? 2 * (w.shape[1] as number) : w.shape[0];
  checkInner('packedMatMul', x, wk, transposed, `(stored [${w.shape}])`);
  return tf
    .engine()
    .runKernel(PACKED_KERNELS.matMul, { x, w }, { dtype, transposed }) as tf.Tensor2D;
}

/**
 * `x · W` (or, `transposed`, `x · Wᵀ`) for a float32 W with the tiled program of
 * {@link packedMatMul} (64 × 64 output tiles, subgroups where the device has them) instead of
 * TF.js's matmul (32 × 32 tiles): the same product, for comparing the two per shape on a GPU
 * (`npm run gpu:bench -- --steps matmul`). Differentiable in x; W is taken as a constant. Webgpu
 * only.
 */
export function tiledMatMul(x: tf.Tensor2D, w: tf.Tensor2D, transposed = false): tf.Tensor2D {
  if (!packedWeightsSupported()) {
    throw new RangeError(
      `tiledMatMul: runs on the webgpu backend only (active: ${tf.getBackend()}); use tf.matMul there`,
    );
  }
  if (w.dtype !== 'float32' || w.rank !== 2) {
    throw new RangeError(
      `tiledMatMul: the weight is a float32 [rows, cols] tensor, got ${w.dtype} [${w.shape}] (a packed one goes to packedMatMul)`,
    );
  }
  checkInner('tiledMatMul', x, transposed ? w.shape[1] : w.shape[0], transposed, `[${w.shape}]`);
  return tf
    .engine()
    .runKernel(PACKED_KERNELS.matMul, { x, w }, { dtype: 'float32', transposed }) as tf.Tensor2D;
}

/** Rows `ids` of a packed [vocab, cols] matrix as float32 [ids, cols] (an embedding lookup). */
export function packedGather(w: tf.Tensor2D, ids: tf.Tensor1D, dtype: PackedDtype): tf.Tensor2D {
  checkPacked('packedGather', w, dtype);
  if (ids.dtype !== 'int32')
    throw new RangeError(`packedGather: ids must be int32, got ${ids.dtype}`);
  return tf.engine().runKernel(PACKED_KERNELS.gather, { w, ids }, { dtype }) as tf.Tensor2D;
}

/** A packed matrix as float32 [rows, cols]. */
export function unpackWeight(w: tf.Tensor2D, dtype: PackedDtype): tf.Tensor2D {
  checkPacked('unpackWeight', w, dtype);
  return tf.engine().runKernel(PACKED_KERNELS.unpack, { w }, { dtype }) as tf.Tensor2D;
}

/**
 * A float32 [rows, cols] matrix (cols even) packed on the device: bfloat16 rounded to nearest,
 * ties to even; float16 by WGSL's `pack2x16float`. The inverse of {@link unpackWeight} for values
 * the dtype holds exactly.
 */
export function packWeight(x: tf.Tensor2D, dtype: PackedDtype): tf.Tensor2D {
  requireWebGpu('packWeight', dtype);
  if (x.dtype !== 'float32' || x.rank !== 2 || (x.shape[1] as number) % 2 !== 0) {
    throw new RangeError(
      `packWeight: needs a float32 [rows, cols] matrix with an even number of columns, got ${x.dtype} [${x.shape}]`,
    );
  }
  return tf.engine().runKernel(PACKED_KERNELS.pack, { x }, { dtype }) as tf.Tensor2D;
}

/**
 * A packed [rows, cols] matrix (cols even) of normal draws N(mean, std²) made on the device in
 * one program: Box–Muller pairs of uniforms hashed from (seed, position), so no random number is
 * made on the host (TF.js's `randomNormal` draws on the host) and the values depend only on the
 * seed and the shape. For random weights of billion-parameter shapes.
 */
export function randomPackedNormal(
  rows: number,
  cols: number,
  dtype: PackedDtype,
  opts: { seed: number; std: number; mean?: number },
): tf.Tensor2D {
  requireWebGpu('randomPackedNormal', dtype);
  if (
    !Number.isInteger(rows) ||
    rows < 1 ||
    !Number.isInteger(cols) ||
    cols < 2 ||
    cols % 2 !== 0
  ) {
    throw new RangeError(
      `randomPackedNormal: needs rows ≥ 1 and an even cols ≥ 2, got [${rows}, ${cols}]`,
    );
  }
  return tf
    .engine()
    .runKernel(
      PACKED_KERNELS.randomNormal,
      {},
      { rows, cols, dtype, seed: opts.seed | 0, mean: opts.mean ?? 0, std: opts.std },
    ) as tf.Tensor2D;
}
