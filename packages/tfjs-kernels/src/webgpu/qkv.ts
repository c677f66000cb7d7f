import * as tf from '@tensorflow/tfjs-core';
import type { FusedOps } from '../fused.js';
import {
  type Backend,
  type KernelArgs,
  registerWebGpuKernelTable,
  unpackInto,
} from './multi-tensor.js';
import { elementwise, type GpuProgram } from './programs.js';

/*
 * The step between a fused q|k|v projection and attention in one program: the projection's
 * output [rows, qW + kW + vW] is cut into q, k and v, each part's LoRA update is added with its
 * scale, and q and k are rotated (rotate-half rotary embedding, per-row tables cos/sin
 * [rows, hd/2]). The program writes q, then k, then v, one block after the other, which buffer
 * copies cut into three tensors; the TF.js composition takes three slices, up to three scaled
 * additions and two rotations. Its gradient is one program for the projection's output (the
 * rotations undone, the three parts side by side) and one per LoRA update.
 */

/** Names of the q|k|v kernels registered for the webgpu backend. */
export const QKV_KERNELS = {
  split: 'PoadGpuSplitQkv',
  gradY: 'PoadGpuSplitQkvGradY',
  gradLow: 'PoadGpuSplitQkvGradLow',
} as const;

/** Widths of the three parts, the half head size of the rotation, and which parts have LoRA. */
interface QkvAttrs {
  qW: number;
  kW: number;
  vW: number;
  half: number;
  scale: number;
  /** Bit 1: q has a LoRA update, 2: k, 4: v. */
  lows: number;
}

/**
 * WGSL of the rotate-half rotation of column `c` of a part (`sign` 1 forward, −1 undoes it),
 * whose unrotated values `pre(col)` returns, with `cosT`/`sinT` per row.
 */
const ROTATE = `
      fn rotated(row : i32, c : i32, sign : f32) -> f32 {
        let half = uniforms.half;
        let i = c % (2 * half);
        let f = i % half;
        let co = cosT[row * half + f];
        let s = sign * sinT[row * half + f];
        if (i < half) { return pre(row, c) * co - pre(row, c + half) * s; }
        return pre(row, c) * co + pre(row, c - half) * s;
      }`;

/**
 * `program` with the WGSL function `pre(row, c)` (whose body is `pre`, reading the private
 * `part` the program sets: 0 q, 1 k, 2 v) and, with `rotate`, {@link ROTATE} over it.
 */
function withPre(program: GpuProgram, pre: string, rotate = true): GpuProgram {
  const body = program.getUserCode();
  return {
    ...program,
    getUserCode: () => `
      var<private> part : i32;
      fn pre(row : i32, c : i32) -> f32 {
        ${pre}
      }
      ${rotate ? ROTATE : ''}
      ${body}`,
  };
}

const UNIFORMS = 'rows : i32, qW : i32, kW : i32, vW : i32, half : i32, scale : f32, lows : i32,';

function uniforms(rows: number, a: QkvAttrs): Array<{ type: string; data: number[] }> {
  return [
    { type: 'int32', data: [rows] },
    { type: 'int32', data: [a.qW] },
    { type: 'int32', data: [a.kW] },
    { type: 'int32', data: [a.vW] },
    { type: 'int32', data: [a.half] },
    { type: 'float32', data: [a.scale] },
    { type: 'int32', data: [a.lows] },
  ];
}

/** Forward: [rows·(qW + kW + vW)], q's block, then k's, then v's. */
function splitProgram(rows: number, width: number): GpuProgram {
  return withPre(
    elementwise(
      'poad_split_qkv',
      ['y', 'lq', 'lk', 'lv', 'cosT', 'sinT'],
      [rows * width],
      `
          let rows = uniforms.rows;
          let qEnd = rows * uniforms.qW;
          let kEnd = qEnd + rows * uniforms.kW;
          if (index < qEnd) {
            part = 0;
            result[index] = rotated(index / uniforms.qW, index % uniforms.qW, 1.0);
          } else if (index < kEnd) {
            part = 1;
            let j = index - qEnd;
            result[index] = rotated(j / uniforms.kW, j % uniforms.kW, 1.0);
          } else {
            part = 2;
            let j = index - kEnd;
            result[index] = pre(j / uniforms.vW, j % uniforms.vW);
          }`,
      UNIFORMS,
    ),
    `let W = uniforms.qW + uniforms.kW + uniforms.vW;
        if (part == 0) {
          var x = y[row * W + c];
          if ((uniforms.lows & 1) != 0) { x = x + uniforms.scale * lq[row * uniforms.qW + c]; }
          return x;
        }
        if (part == 1) {
          var x = y[row * W + uniforms.qW + c];
          if ((uniforms.lows & 2) != 0) { x = x + uniforms.scale * lk[row * uniforms.kW + c]; }
          return x;
        }
        var x = y[row * W + uniforms.qW + uniforms.kW + c];
        if ((uniforms.lows & 4) != 0) { x = x + uniforms.scale * lv[row * uniforms.vW + c]; }
        return x;`,
  );
}

/** The gradient of the projection's output [rows, qW + kW + vW]: each part unrotated, side by side. */
function gradYProgram(rows: number, width: number): GpuProgram {
  return withPre(
    elementwise(
      'poad_split_qkv_grad_y',
      ['dq', 'dk', 'dv', 'cosT', 'sinT'],
      [rows, width],
      `
          let W = uniforms.qW + uniforms.kW + uniforms.vW;
          let row = index / W;
          let c = index - row * W;
          if (c < uniforms.qW) {
            part = 0;
            result[index] = rotated(row, c, -1.0);
          } else if (c < uniforms.qW + uniforms.kW) {
            part = 1;
            result[index] = rotated(row, c - uniforms.qW, -1.0);
          } else {
            part = 2;
            result[index] = pre(row, c - uniforms.qW - uniforms.kW);
          }`,
      UNIFORMS,
    ),
    `if (part == 0) { return dq[row * uniforms.qW + c]; }
        if (part == 1) { return dk[row * uniforms.kW + c]; }
        return dv[row * uniforms.vW + c];`,
  );
}

/** The gradient of one part's LoRA update: scale × the part's gradient, unrotated for q and k. */
function gradLowProgram(rows: number, w: number, rotate: boolean): GpuProgram {
  const program = withPre(
    elementwise(
      `poad_split_qkv_grad_low_${rotate ? 'r' : 'p'}`,
      // Unused bindings are dropped from the pipeline's layout: v's program binds no tables.
      rotate ? ['d', 'cosT', 'sinT'] : ['d'],
      [rows, w],
      `
          let row = index / ${w};
          let c = index - row * ${w};
          result[index] = uniforms.scale * ${rotate ? 'rotated(row, c, -1.0)' : 'pre(row, c)'};`,
      UNIFORMS,
    ),
    `return d[row * ${w} + c];`,
    rotate,
  );
  return { ...program, shaderKey: `${program.shaderKey}_${w}` };
}

const KERNELS: Record<string, (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]> = {
  [QKV_KERNELS.split]: ({ inputs, backend, attrs }) => {
    const { y, lq, lk, lv, cos, sin } = inputs as Record<string, tf.TensorInfo>;
    const a = attrs as unknown as QkvAttrs;
    const rows = y!.shape[0] as number;
    const width = a.qW + a.kW + a.vW;
    const b = backend as Backend;
    const packed = b.runWebGPUProgram(
      splitProgram(rows, width),
      [y!, lq!, lk!, lv!, cos!, sin!],
      'float32',
      uniforms(rows, a),
    );
    const out = unpackInto(b, packed, [
      [rows, a.qW],
      [rows, a.kW],
      [rows, a.vW],
    ]);
    b.disposeData(packed.dataId);
    return out;
  },
  [QKV_KERNELS.gradY]: ({ inputs, backend, attrs }) => {
    const { dq, dk, dv, cos, sin } = inputs as Record<string, tf.TensorInfo>;
    const a = attrs as unknown as QkvAttrs;
    const rows = dq!.shape[0] as number;
    return (backend as Backend).runWebGPUProgram(
      gradYProgram(rows, a.qW + a.kW + a.vW),
      [dq!, dk!, dv!, cos!, sin!],
      'float32',
      uniforms(rows, a),
    );
  },
  [QKV_KERNELS.gradLow]: ({ inputs, backend, attrs }) => {
    const { d, cos, sin } = inputs as Record<string, tf.TensorInfo>;
    const a = attrs as unknown as QkvAttrs & { rotate: boolean };
    const [rows, w] = d!.shape as [number, number];
    return (backend as Backend).runWebGPUProgram(
      gradLowProgram(rows, w, a.rotate),
      a.rotate ? [d!, cos!, sin!] : [d!],
      'float32',
      uniforms(rows, a),
    );
  },
};

const run = (name: string, inputs: Record<string, tf.Tensor>, attrs: tf.NamedAttrMap) =>
  tf.engine().runKernel(name, inputs as tf.NamedTensorMap, attrs) as tf.Tensor;

/** Registers the q|k|v kernels and their gradient for the webgpu backend (idempotent). */
export function registerQkvKernels(): void {
  registerWebGpuKernelTable(KERNELS);
  if (tf.getGradient(QKV_KERNELS.split)) return;
  tf.registerGradient({
    kernelName: QKV_KERNELS.split,
    inputsToSave: ['cos', 'sin'],
    gradFunc: (dy, saved, attrs) => {
      const [cos, sin] = saved as [tf.Tensor, tf.Tensor];
      const a = attrs as unknown as QkvAttrs;
      // A part that no loss uses has no gradient (TF.js passes null): zeros of its shape.
      const rows = cos.shape[0] as number;
      const [dq, dk, dv] = (dy as (tf.Tensor | null)[]).map(
        (d, i) => d ?? tf.zeros([rows, [a.qW, a.kW, a.vW][i]!]),
      ) as [tf.Tensor, tf.Tensor, tf.Tensor];
      const low = (d: tf.Tensor, rotate: boolean) => () =>
        run(QKV_KERNELS.gradLow, { d, cos, sin }, { ...a, rotate } as unknown as tf.NamedAttrMap);
      return {
        y: () => run(QKV_KERNELS.gradY, { dq, dk, dv, cos, sin }, attrs),
        lq: low(dq, true),
        lk: low(dk, true),
        lv: low(dv, false),
        cos: () => tf.zerosLike(cos),
        sin: () => tf.zerosLike(sin),
      };
    },
  });
}

/**
 * q, k and v of a fused q|k|v projection's output `y` [rows, qW + kW + vW]: each part plus
 * `scale` × its LoRA update (`lows.q` [rows, qW], …; a missing one adds nothing), q and k rotated
 * by the rotate-half rotary embedding with per-row tables `cos`/`sin` [rows, hd/2] over heads of
 * hd columns. One program (webgpu); differentiable in y and the updates.
 */
export const splitQkv: NonNullable<FusedOps['splitQkv']> = (y, lows, scale, cos, sin, widths) => {
  const rows = y.shape[0];
  const half = cos.shape[1];
  if (
    y.shape[1] !== widths.q + widths.k + widths.v ||
    cos.shape[0] !== rows ||
    sin.shape[0] !== rows ||
    sin.shape[1] !== half ||
    widths.q % (2 * half) !== 0 ||
    widths.k % (2 * half) !== 0
  ) {
    throw new RangeError(
      `splitQkv: y [${y.shape}], cos [${cos.shape}] and sin [${sin.shape}] do not fit widths q ${widths.q}, k ${widths.k}, v ${widths.v} (y [rows, q + k + v], tables [rows, hd/2] with q and k made of heads of hd)`,
    );
  }
  for (const [name, t, w] of [
    ['q', lows.q, widths.q],
    ['k', lows.k, widths.k],
    ['v', lows.v, widths.v],
  ] as const) {
    if (t && (t.shape[0] !== rows || t.shape[1] !== w)) {
      throw new RangeError(`splitQkv: the ${name} update [${t.shape}] must be [${rows}, ${w}]`);
    }
  }
  // A missing update is bound to a table it never reads (no gradient reaches a constant).
  const attrs: QkvAttrs = {
    qW: widths.q,
    kW: widths.k,
    vW: widths.v,
    half,
    scale,
    lows: (lows.q ? 1 : 0) | (lows.k ? 2 : 0) | (lows.v ? 4 : 0),
  };
  return tf.engine().runKernel(
    QKV_KERNELS.split,
    {
      y,
      lq: lows.q ?? cos,
      lk: lows.k ?? cos,
      lv: lows.v ?? cos,
      cos,
      sin,
    } as unknown as tf.NamedTensorMap,
    attrs as unknown as tf.NamedAttrMap,
  ) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
};
