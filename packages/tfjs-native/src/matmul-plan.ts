/**
 * How one `BatchMatMul` maps onto row-major GEMM calls: the output shape, the GEMM sizes, and
 * for each output matrix which matrix of `a` and of `b` it multiplies (NumPy-style
 * broadcasting of the batch dimensions).
 */
export interface MatMulPlan {
  /** Broadcast batch dimensions followed by `[m, n]`. */
  outShape: number[];
  /** Number of output matrices (after collapsing, see `collapsed`). */
  batch: number;
  m: number;
  n: number;
  k: number;
  /** Number of matrices stored in `a` / `b`. */
  aBatch: number;
  bBatch: number;
  /** Matrix of `a` / `b` used by output matrix `i`; `null` means `i` (same batch) or `0` (one matrix). */
  aIndex: Int32Array | null;
  bIndex: Int32Array | null;
  /** True when a stack of `a` matrices times one `b` became a single taller GEMM. */
  collapsed: boolean;
}

/** Thrown for shapes that cannot be multiplied; the message names both shapes. */
export class MatMulShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MatMulShapeError';
  }
}

function product(dims: readonly number[]): number {
  let p = 1;
  for (const d of dims) p *= d;
  return p;
}

/** Row-major strides of `dims` left-padded to `rank`, with 0 for broadcast (size-1) axes. */
function broadcastStrides(dims: readonly number[], rank: number): number[] {
  const padded = [...new Array<number>(rank - dims.length).fill(1), ...dims];
  const strides = new Array<number>(rank).fill(0);
  let s = 1;
  for (let i = rank - 1; i >= 0; i--) {
    const d = padded[i]!;
    strides[i] = d === 1 ? 0 : s;
    s *= d;
  }
  return strides;
}

function batchIndex(dims: readonly number[], out: readonly number[]): Int32Array {
  const total = product(out);
  const strides = broadcastStrides(dims, out.length);
  const index = new Int32Array(total);
  const counter = new Array<number>(out.length).fill(0);
  let offset = 0;
  for (let i = 0; i < total; i++) {
    index[i] = offset;
    for (let ax = out.length - 1; ax >= 0; ax--) {
      counter[ax]! += 1;
      offset += strides[ax]!;
      if (counter[ax]! < out[ax]!) break;
      offset -= strides[ax]! * out[ax]!;
      counter[ax] = 0;
    }
  }
  return index;
}

function sameBatch(dims: readonly number[], out: readonly number[]): boolean {
  const lead = out.length - dims.length;
  for (let i = 0; i < lead; i++) if (out[i] !== 1) return false;
  for (let i = 0; i < dims.length; i++) if (dims[i] !== out[lead + i]) return false;
  return true;
}

/**
 * Plan `matMul(a, b, transposeA, transposeB)` for inputs of rank ≥ 2 whose batch dimensions
 * broadcast. Throws {@link MatMulShapeError} when ranks, inner sizes or batches do not fit.
 */
export function planMatMul(
  aShape: readonly number[],
  bShape: readonly number[],
  transposeA: boolean,
  transposeB: boolean,
): MatMulPlan {
  if (aShape.length < 2 || bShape.length < 2) {
    throw new MatMulShapeError(
      `matMul: both inputs need rank >= 2, got a [${aShape}] and b [${bShape}]; reshape vectors to matrices`,
    );
  }
  const ar = aShape.length;
  const br = bShape.length;
  const m = transposeA ? aShape[ar - 1]! : aShape[ar - 2]!;
  const k = transposeA ? aShape[ar - 2]! : aShape[ar - 1]!;
  const kb = transposeB ? bShape[br - 1]! : bShape[br - 2]!;
  const n = transposeB ? bShape[br - 2]! : bShape[br - 1]!;
  if (k !== kb) {
    throw new MatMulShapeError(
      `matMul: inner sizes differ (${k} vs ${kb}) for a [${aShape}] and b [${bShape}] with transposeA=${transposeA}, transposeB=${transposeB}`,
    );
  }
  const aDims = aShape.slice(0, -2);
  const bDims = bShape.slice(0, -2);
  const rank = Math.max(aDims.length, bDims.length);
  const outDims = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    const da = aDims[i - (rank - aDims.length)] ?? 1;
    const db = bDims[i - (rank - bDims.length)] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new MatMulShapeError(
        `matMul: batch dimensions of a [${aShape}] and b [${bShape}] do not broadcast`,
      );
    }
    outDims[i] = da === 1 ? db : da;
  }
  const batch = product(outDims);
  const aBatch = product(aDims);
  const bBatch = product(bDims);
  const aIndex = aBatch === 1 || sameBatch(aDims, outDims) ? null : batchIndex(aDims, outDims);
  const bIndex = bBatch === 1 || sameBatch(bDims, outDims) ? null : batchIndex(bDims, outDims);
  const outShape = [...outDims, m, n];
  if (batch > 1 && bBatch === 1 && aIndex === null && aBatch === batch && !transposeA) {
    return {
      outShape,
      batch: 1,
      m: m * batch,
      n,
      k,
      aBatch: 1,
      bBatch: 1,
      aIndex: null,
      bIndex: null,
      collapsed: true,
    };
  }
  return { outShape, batch, m, n, k, aBatch, bBatch, aIndex, bIndex, collapsed: false };
}
