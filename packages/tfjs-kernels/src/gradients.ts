import * as tf from '@tensorflow/tfjs-core';

/*
 * Gradients for the TF.js kernels a transformer and its losses use. `@tensorflow/tfjs-core`
 * ships its gradient definitions only as unbundled ES modules that Node cannot load on its own
 * (the union `@tensorflow/tfjs` package bundles them), so this package defines them. Nothing is
 * replaced: a kernel that already has a gradient keeps it.
 */

type Grads = Record<string, () => tf.Tensor>;
type GradFn = (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: tf.NamedAttrMap) => Grads;

interface Def {
  inputsToSave?: string[];
  outputsToSave?: boolean[];
  grad: GradFn;
}

const f32 = (t: tf.Tensor): tf.Tensor => tf.cast(t, 'float32');
const one = (dy: tf.Tensor | tf.Tensor[]): tf.Tensor =>
  Array.isArray(dy) ? (dy[0] as tf.Tensor) : dy;
const s0 = (saved: tf.Tensor[]): tf.Tensor => saved[0] as tf.Tensor;
const s1 = (saved: tf.Tensor[]): tf.Tensor => saved[1] as tf.Tensor;

/** Sum a broadcast gradient back down to `shape`. */
export function reduceTo(g: tf.Tensor, shape: readonly number[]): tf.Tensor {
  if (g.rank === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.rank - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < g.rank; i++) {
    if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) axes.push(i);
  }
  const r = axes.length > 0 ? tf.sum(g, axes) : g;
  return tf.reshape(r, shape as number[]);
}

function normAxes(axis: number | number[] | undefined, rank: number): number[] {
  if (axis === undefined || axis === null) return Array.from({ length: rank }, (_, i) => i);
  const list = Array.isArray(axis) ? axis : [axis];
  return list.map((a) => (a < 0 ? a + rank : a));
}

/** Shape of a reduction result with kept dimensions. */
function keptShape(shape: readonly number[], axes: number[]): number[] {
  return shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

/** matMul with explicit transposes for rank-2 inputs (the fast path on wasm). */
function mm(a: tf.Tensor, b: tf.Tensor, ta: boolean, tb: boolean): tf.Tensor {
  if (a.rank === 2 && b.rank === 2) {
    return tf.matMul(
      ta ? tf.transpose(a) : (a as tf.Tensor2D),
      tb ? tf.transpose(b) : (b as tf.Tensor2D),
    );
  }
  return tf.matMul(a, b, ta, tb);
}

const unary = (fn: (dy: tf.Tensor, x: tf.Tensor) => tf.Tensor): Def => ({
  inputsToSave: ['x'],
  grad: (dy, saved) => ({ x: () => fn(one(dy), s0(saved)) }),
});
const unaryOut = (fn: (dy: tf.Tensor, y: tf.Tensor) => tf.Tensor): Def => ({
  outputsToSave: [true],
  grad: (dy, saved) => ({ x: () => fn(one(dy), s0(saved)) }),
});
const zeroGrad: Def = {
  inputsToSave: ['x'],
  grad: (_dy, saved) => ({ x: () => tf.zerosLike(s0(saved)) }),
};
const binary = (
  da: (dy: tf.Tensor, a: tf.Tensor, b: tf.Tensor) => tf.Tensor,
  db: (dy: tf.Tensor, a: tf.Tensor, b: tf.Tensor) => tf.Tensor,
): Def => ({
  inputsToSave: ['a', 'b'],
  grad: (dy, saved) => {
    const a = s0(saved);
    const b = s1(saved);
    const g = one(dy);
    return { a: () => reduceTo(da(g, a, b), a.shape), b: () => reduceTo(db(g, a, b), b.shape) };
  },
});

function reduceGrad(scaleByCount: boolean): Def {
  return {
    inputsToSave: ['x'],
    grad: (dy, saved, attrs) => {
      const x = s0(saved);
      const axes = normAxes(attrs.axis as number | number[] | undefined, x.rank);
      return {
        x: () => {
          let g = tf.mul(tf.reshape(one(dy), keptShape(x.shape, axes)), tf.onesLike(x));
          if (scaleByCount)
            g = tf.div(
              g,
              axes.reduce((n, a) => n * (x.shape[a] as number), 1),
            );
          return g;
        },
      };
    },
  };
}

function extremumGrad(): Def {
  return {
    inputsToSave: ['x'],
    outputsToSave: [true],
    grad: (dy, saved, attrs) => {
      const x = s0(saved);
      const y = s1(saved);
      const axes = normAxes(
        (attrs.reductionIndices ?? attrs.axis) as number | number[] | undefined,
        x.rank,
      );
      const kept = keptShape(x.shape, axes);
      return { x: () => tf.mul(f32(tf.equal(x, tf.reshape(y, kept))), tf.reshape(one(dy), kept)) };
    },
  };
}

function normalizedSlice(
  x: tf.Tensor,
  attrs: tf.NamedAttrMap,
): { begin: number[]; size: number[] } {
  const b = attrs.begin as number | number[];
  const s = attrs.size as number | number[] | undefined;
  const bl = Array.isArray(b) ? b : [b];
  const sl = s === undefined ? [] : Array.isArray(s) ? s : [s];
  const begin = x.shape.map((_, i) => bl[i] ?? 0);
  const size = x.shape.map((d, i) => {
    const v = sl[i] ?? -1;
    return v < 0 ? d - (begin[i] as number) : v;
  });
  return { begin, size };
}

function gatherGrad(x: tf.Tensor, indices: tf.Tensor, dy: tf.Tensor, axisAttr: number): tf.Tensor {
  const axis = axisAttr < 0 ? axisAttr + x.rank : axisAttr;
  const iRank = indices.rank;
  const n = indices.size;
  const flatIdx = tf.reshape(indices, [n]) as tf.Tensor1D;
  const before = x.shape.slice(0, axis);
  const after = x.shape.slice(axis + 1);
  // Bring the index dimensions of dy to the front: [n, before..., after...].
  const perm = [
    ...Array.from({ length: iRank }, (_, i) => axis + i),
    ...Array.from({ length: axis }, (_, i) => i),
    ...Array.from({ length: after.length }, (_, i) => axis + iRank + i),
  ];
  const moved = axis === 0 ? dy : tf.transpose(dy, perm);
  const rows = tf.reshape(moved, [n, ...before, ...after]);
  const summed = tf.unsortedSegmentSum(rows, flatIdx, x.shape[axis] as number);
  if (axis === 0) return summed;
  // summed is [x.shape[axis], before..., after...]; move dim 0 back to `axis`.
  const back = [
    ...Array.from({ length: axis }, (_, i) => i + 1),
    0,
    ...Array.from({ length: after.length }, (_, i) => axis + 1 + i),
  ];
  return tf.transpose(summed, back);
}

const DEFS: Record<string, Def> = {
  Identity: unary((dy) => dy),
  Neg: unary((dy) => tf.neg(dy)),
  Exp: unaryOut((dy, y) => tf.mul(dy, y)),
  Log: unary((dy, x) => tf.div(dy, f32(x))),
  Sqrt: unary((dy, x) => tf.div(dy, tf.mul(tf.sqrt(f32(x)), 2))),
  Rsqrt: unary((dy, x) => tf.mul(dy, tf.mul(tf.div(tf.rsqrt(x), x), -0.5))),
  Square: unary((dy, x) => tf.mul(dy, tf.mul(f32(x), 2))),
  Reciprocal: unary((dy, x) => tf.neg(tf.div(dy, tf.square(x)))),
  Abs: unary((dy, x) => tf.mul(dy, tf.sign(f32(x)))),
  Relu: unary((dy, x) => tf.mul(dy, f32(tf.greater(x, 0)))),
  Sigmoid: unaryOut((dy, y) => tf.mul(dy, tf.mul(y, tf.sub(1, y)))),
  Tanh: unaryOut((dy, y) => tf.mul(dy, tf.sub(1, tf.square(y)))),
  Cast: unary((dy, x) => (x.dtype === 'float32' ? f32(dy) : tf.zerosLike(x))),
  Floor: zeroGrad,
  Ceil: zeroGrad,
  Round: zeroGrad,
  Sign: zeroGrad,
  Step: zeroGrad,
  ZerosLike: zeroGrad,
  OnesLike: zeroGrad,
  Add: binary(
    (dy) => dy,
    (dy) => dy,
  ),
  Sub: binary(
    (dy) => dy,
    (dy) => tf.neg(dy),
  ),
  Multiply: binary(
    (dy, _a, b) => tf.mul(dy, f32(b)),
    (dy, a) => tf.mul(dy, f32(a)),
  ),
  RealDiv: binary(
    (dy, _a, b) => tf.div(dy, b),
    (dy, a, b) => tf.neg(tf.div(tf.mul(dy, a), tf.square(b))),
  ),
  Maximum: binary(
    (dy, a, b) => tf.mul(dy, f32(tf.greaterEqual(a, b))),
    (dy, a, b) => tf.mul(dy, f32(tf.less(a, b))),
  ),
  Minimum: binary(
    (dy, a, b) => tf.mul(dy, f32(tf.lessEqual(a, b))),
    (dy, a, b) => tf.mul(dy, f32(tf.greater(a, b))),
  ),
  SquaredDifference: binary(
    (dy, a, b) => tf.mul(dy, tf.mul(tf.sub(a, b), 2)),
    (dy, a, b) => tf.mul(dy, tf.mul(tf.sub(b, a), 2)),
  ),
  Pow: {
    inputsToSave: ['a', 'b'],
    outputsToSave: [true],
    grad: (dy, saved) => {
      const [a, b, y] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
      const g = one(dy);
      return {
        a: () => reduceTo(tf.mul(g, tf.mul(b, tf.pow(a, tf.sub(b, 1)))), a.shape),
        b: () => {
          const safeLog = tf.where(tf.greater(a, 0), tf.log(a), tf.zerosLike(a));
          return reduceTo(tf.mul(g, tf.mul(y, safeLog)), b.shape);
        },
      };
    },
  },
  Sum: reduceGrad(false),
  Mean: reduceGrad(true),
  Max: extremumGrad(),
  Min: extremumGrad(),
  Reshape: unary((dy, x) => tf.reshape(dy, x.shape)),
  ExpandDims: {
    inputsToSave: ['input'],
    grad: (dy, saved) => ({ input: () => tf.reshape(one(dy), s0(saved).shape) }),
  },
  Transpose: {
    grad: (dy, _saved, attrs) => {
      const perm = attrs.perm as number[];
      const inv = new Array<number>(perm.length);
      perm.forEach((p, i) => {
        inv[p] = i;
      });
      return { x: () => tf.transpose(one(dy), inv) };
    },
  },
  BroadcastTo: {
    grad: (dy, _saved, attrs) => ({ x: () => reduceTo(one(dy), attrs.inputShape as number[]) }),
  },
  Slice: {
    inputsToSave: ['x'],
    grad: (dy, saved, attrs) => {
      const x = s0(saved);
      const { begin, size } = normalizedSlice(x, attrs);
      const pads = x.shape.map((d, i): [number, number] => [
        begin[i] as number,
        d - (begin[i] as number) - (size[i] as number),
      ]);
      return { x: () => tf.pad(one(dy), pads) };
    },
  },
  SplitV: {
    grad: (dy, _saved, attrs) => {
      const list = dy as tf.Tensor[];
      const rank = (list[0] as tf.Tensor).rank;
      const axis =
        (attrs.axis as number) < 0 ? (attrs.axis as number) + rank : (attrs.axis as number);
      return { x: () => tf.concat(list, axis) };
    },
  },
  Concat: {
    saveAllInputs: true,
    grad: (dy, saved, attrs) => {
      const g = one(dy);
      const axisRaw = attrs.axis as number;
      const axis = axisRaw < 0 ? axisRaw + g.rank : axisRaw;
      const sizes = saved.map((t) => t.shape[axis] as number);
      const parts = tf.split(g, sizes, axis);
      const out: Grads = {};
      parts.forEach((p, i) => {
        out[String(i)] = () => p;
      });
      return out;
    },
  } as Def,
  Pack: {
    grad: (dy, _saved, attrs) => {
      const parts = tf.unstack(one(dy), attrs.axis as number);
      const out: Grads = {};
      parts.forEach((p, i) => {
        out[String(i)] = () => p;
      });
      return out;
    },
  },
  Unpack: {
    grad: (dy, _saved, attrs) => ({
      value: () => tf.stack(dy as tf.Tensor[], attrs.axis as number),
    }),
  },
  Tile: {
    inputsToSave: ['x'],
    grad: (dy, saved, attrs) => {
      const x = s0(saved);
      const reps = attrs.reps as number[];
      const split: number[] = [];
      x.shape.forEach((d, i) => {
        split.push(reps[i] as number, d);
      });
      const axes = x.shape.map((_, i) => 2 * i);
      return { x: () => tf.sum(tf.reshape(one(dy), split), axes) };
    },
  },
  ClipByValue: {
    inputsToSave: ['x'],
    grad: (dy, saved, attrs) => {
      const x = s0(saved);
      const inside = tf.logicalAnd(
        tf.greaterEqual(x, attrs.clipValueMin as number),
        tf.lessEqual(x, attrs.clipValueMax as number),
      );
      return { x: () => tf.mul(one(dy), f32(inside)) };
    },
  },
  Select: {
    inputsToSave: ['condition'],
    grad: (dy, saved) => {
      const c = s0(saved);
      const g = one(dy);
      return {
        condition: () => tf.zerosLike(c),
        t: () => tf.mul(g, f32(c)),
        e: () => tf.mul(g, f32(tf.logicalNot(tf.cast(c, 'bool')))),
      };
    },
  },
  GatherV2: {
    inputsToSave: ['x', 'indices'],
    grad: (dy, saved, attrs) => {
      const [x, indices] = saved as [tf.Tensor, tf.Tensor];
      if ((attrs.batchDims as number | undefined) ?? 0) {
        throw new Error('GatherV2 gradient: batchDims > 0 is not supported');
      }
      return {
        x: () => gatherGrad(x, indices, one(dy), attrs.axis as number),
        indices: () => tf.zerosLike(indices),
      };
    },
  },
  Softmax: {
    outputsToSave: [true],
    grad: (dy, saved, attrs) => {
      const y = s0(saved);
      const g = one(dy);
      const dim = (attrs.dim as number) < 0 ? y.rank - 1 : (attrs.dim as number);
      return { logits: () => tf.mul(y, tf.sub(g, tf.sum(tf.mul(g, y), dim, true))) };
    },
  },
  BatchMatMul: {
    inputsToSave: ['a', 'b'],
    grad: (dy, saved, attrs) => {
      const [a, b] = saved as [tf.Tensor, tf.Tensor];
      const g = one(dy);
      const ta = attrs.transposeA === true;
      const tb = attrs.transposeB === true;
      let da: () => tf.Tensor;
      let db: () => tf.Tensor;
      if (!ta && !tb) {
        da = () => mm(g, b, false, true);
        db = () => mm(a, g, true, false);
      } else if (!ta && tb) {
        da = () => mm(g, b, false, false);
        db = () => mm(g, a, true, false);
      } else if (ta && !tb) {
        da = () => mm(b, g, false, true);
        db = () => mm(a, g, false, false);
      } else {
        da = () => mm(b, g, true, true);
        db = () => mm(g, a, true, true);
      }
      return { a: () => reduceTo(da(), a.shape), b: () => reduceTo(db(), b.shape) };
    },
  },
};

let registered = false;

/**
 * Register the gradients above for every kernel that has none yet (idempotent; called by the
 * model before any pass and by `initBackend`). Exported for code that differentiates its own
 * TF.js losses (PPO clipping uses Minimum, Maximum, ClipByValue, Exp, …).
 */
export function registerGradients(): void {
  if (registered) return;
  for (const [kernelName, def] of Object.entries(DEFS)) {
    if (tf.getGradient(kernelName)) continue;
    const cfg = {
      kernelName,
      inputsToSave: def.inputsToSave,
      outputsToSave: def.outputsToSave,
      saveAllInputs: (def as { saveAllInputs?: boolean }).saveAllInputs,
      gradFunc: def.grad as unknown as tf.GradFunc,
    } as tf.GradConfig;
    tf.registerGradient(cfg);
  }
  registered = true;
}
