import * as tf from '@tensorflow/tfjs-core';
import type { FusedOps } from '../fused.js';
import { PACKED_KERNELS } from '../packed.js';
import {
  type AttentionDims,
  attentionForwardProgram,
  attentionGradKVProgram,
  attentionGradQProgram,
  attentionStatsProgram,
  attentionUniforms,
  prefixAttentionProgram,
  rangeAttentionGradKVProgram,
  rangeAttentionGradQProgram,
  rangeAttentionProgram,
  rangeAttentionStatsProgram,
} from './attention.js';
import { cacheAttentionProgram, sampleTokensProgram } from './generation.js';
import { type Backend, copy, registerMultiTensorKernels } from './multi-tensor.js';
import {
  type PackedDtype,
  packedGatherProgram,
  packedMatMulProgram,
  packProgram,
  randomPackedProgram,
  unpackProgram,
} from './packed.js';
import { registerPpoLossKernels } from './ppo-loss.js';
import {
  addScaledProgram,
  type GpuProgram,
  logProbStatsGradProgram,
  logProbStatsProgram,
  rmsNormGradWProgram,
  rmsNormGradXProgram,
  rmsNormProgram,
  rotaryProgram,
  rowRstdProgram,
  rowUniforms,
  scaleProgram,
  swiGluGradGateProgram,
  swiGluGradUpProgram,
  swiGluJoinedGradProgram,
  swiGluJoinedProgram,
  swiGluProgram,
} from './programs.js';
import { registerQkvKernels, splitQkv } from './qkv.js';
import { subgroupSize } from './subgroups.js';

/*
 * The model's fused ops on the webgpu backend: each op is a TF.js kernel running one WGSL program
 * (programs.ts), with a registered gradient whose parts are computed only for the inputs that
 * need them (the tape skips frozen weights), so a LoRA step never computes the norm weights'
 * gradients. The math is that of the TF.js compositions (log-prob-stats.ts here; RMSNorm, SwiGLU
 * and the rotary embedding in `@poad/lora-model`); tests compare both.
 */

/** What the fused ops use of the webgpu backend. */
type WebGpuBackendLike = Pick<Backend, 'runWebGPUProgram'>;

/** Names of the kernels this file registers for the webgpu backend. */
export const GPU_KERNELS = {
  rmsNorm: 'PoadGpuRmsNorm',
  rmsNormGradX: 'PoadGpuRmsNormGradX',
  rmsNormGradW: 'PoadGpuRmsNormGradW',
  swiGlu: 'PoadGpuSwiGlu',
  swiGluGradGate: 'PoadGpuSwiGluGradGate',
  swiGluGradUp: 'PoadGpuSwiGluGradUp',
  rotary: 'PoadGpuRotary',
  logProbStats: 'PoadGpuLogProbStats',
  logProbStatsGrad: 'PoadGpuLogProbStatsGrad',
  swiGluJoined: 'PoadGpuSwiGluJoined',
  swiGluJoinedGrad: 'PoadGpuSwiGluJoinedGrad',
  addScaled: 'PoadGpuAddScaled',
  scale: 'PoadGpuScale',
  attention: 'PoadGpuAttention',
  prefixAttention: 'PoadGpuPrefixAttention',
  rangeAttention: 'PoadGpuRangeAttention',
  rangeAttentionStats: 'PoadGpuRangeAttentionStats',
  rangeAttentionGradQ: 'PoadGpuRangeAttentionGradQ',
  rangeAttentionGradKV: 'PoadGpuRangeAttentionGradKV',
  attentionStats: 'PoadGpuAttentionStats',
  attentionGradQ: 'PoadGpuAttentionGradQ',
  attentionGradK: 'PoadGpuAttentionGradK',
  attentionGradV: 'PoadGpuAttentionGradV',
  sampleTokens: 'PoadGpuSampleTokens',
  cacheAttention: 'PoadGpuCacheAttention',
} as const;

type Inputs = Record<string, tf.TensorInfo>;
type Attrs = tf.NamedAttrMap;
type Run = (
  inputs: Inputs,
  backend: WebGpuBackendLike,
  attrs: Attrs,
) => tf.TensorInfo | tf.TensorInfo[];

const rowsCols = (t: tf.TensorInfo): [number, number] => [
  t.shape[0] as number,
  t.shape[1] as number,
];

/** Sizes of an attention kernel call from q [batch·seq, heads·hd] and its attributes. */
function attentionDims(q: tf.TensorInfo, attrs: Attrs): AttentionDims {
  const batch = attrs.batch as number;
  const heads = attrs.heads as number;
  return {
    batch,
    seq: (q.shape[0] as number) / batch,
    heads,
    kvHeads: attrs.kvHeads as number,
    hd: (q.shape[1] as number) / heads,
    scale: attrs.scale as number,
  };
}

/** A kernel of one attention gradient (dq, dk or dv): the same inputs, another program. */
function attentionGrad(program: (d: AttentionDims) => GpuProgram): Run {
  return ({ q, k, v, mask, stats, dy }, b, attrs) => {
    const d = attentionDims(q!, attrs);
    return b.runWebGPUProgram(
      program(d),
      [q!, k!, v!, mask!, stats!, dy!],
      'float32',
      attentionUniforms(d),
    );
  };
}

/** Sizes of a ranged attention call from q [rows, heads·hd], k [rows, kvHeads·hd], `kvHeads`. */
function rangeDims(q: tf.TensorInfo, k: tf.TensorInfo, attrs: Attrs) {
  const kvHeads = attrs.kvHeads as number;
  const [rows, width] = q.shape as number[];
  const hd = (k.shape[1] as number) / kvHeads;
  return { rows: rows!, heads: width! / hd, kvHeads, hd, scale: 1 / Math.sqrt(hd) };
}

function rangeUniforms(d: ReturnType<typeof rangeDims>): Array<{ type: string; data: number[] }> {
  return [
    { type: 'int32', data: [d.rows] },
    { type: 'int32', data: [d.heads] },
    { type: 'int32', data: [d.heads / d.kvHeads] },
    { type: 'float32', data: [d.scale] },
  ];
}

const KERNELS: Record<string, Run> = {
  [GPU_KERNELS.rmsNorm]: ({ x, weight }, b, { eps }) => {
    const [rows, cols] = rowsCols(x!);
    return b.runWebGPUProgram(
      rmsNormProgram(rows, cols),
      [x!, weight!],
      'float32',
      rowUniforms(rows, cols, [{ type: 'float32', data: [eps as number] }]),
    );
  },
  [GPU_KERNELS.rmsNormGradX]: ({ x, weight, dy }, b, { eps }) => {
    const [rows, cols] = rowsCols(x!);
    return b.runWebGPUProgram(
      rmsNormGradXProgram(rows, cols),
      [x!, weight!, dy!],
      'float32',
      rowUniforms(rows, cols, [{ type: 'float32', data: [eps as number] }]),
    );
  },
  [GPU_KERNELS.rmsNormGradW]: ({ x, dy }, b, { eps }) => {
    const [rows, cols] = rowsCols(x!);
    const rstd = b.runWebGPUProgram(
      rowRstdProgram(rows, cols),
      [x!],
      'float32',
      rowUniforms(rows, cols, [{ type: 'float32', data: [eps as number] }]),
    );
    const dw = b.runWebGPUProgram(rmsNormGradWProgram(cols), [x!, dy!, rstd], 'float32', [
      { type: 'int32', data: [rows] },
      { type: 'int32', data: [cols] },
    ]);
    (b as unknown as { disposeData(id: object): void }).disposeData(rstd.dataId);
    return dw;
  },
  [GPU_KERNELS.swiGlu]: ({ gate, up }, b) =>
    b.runWebGPUProgram(swiGluProgram(gate!.shape), [gate!, up!], 'float32'),
  [GPU_KERNELS.swiGluGradGate]: ({ gate, up, dy }, b) =>
    b.runWebGPUProgram(swiGluGradGateProgram(gate!.shape), [gate!, up!, dy!], 'float32'),
  [GPU_KERNELS.swiGluGradUp]: ({ gate, dy }, b) =>
    b.runWebGPUProgram(swiGluGradUpProgram(gate!.shape), [gate!, dy!], 'float32'),
  [GPU_KERNELS.swiGluJoined]: ({ gu }, b) =>
    b.runWebGPUProgram(
      swiGluJoinedProgram(gu!.shape[0] as number, (gu!.shape[1] as number) / 2),
      [gu!],
      'float32',
    ),
  [GPU_KERNELS.swiGluJoinedGrad]: ({ gu, dy }, b) =>
    b.runWebGPUProgram(
      swiGluJoinedGradProgram(gu!.shape[0] as number, (gu!.shape[1] as number) / 2),
      [gu!, dy!],
      'float32',
    ),
  [GPU_KERNELS.addScaled]: ({ a, b: other }, b, { scale }) =>
    b.runWebGPUProgram(addScaledProgram(a!.shape), [a!, other!], 'float32', [
      { type: 'float32', data: [scale as number] },
    ]),
  [GPU_KERNELS.scale]: ({ x }, b, { scale }) =>
    b.runWebGPUProgram(scaleProgram(x!.shape), [x!], 'float32', [
      { type: 'float32', data: [scale as number] },
    ]),
  [GPU_KERNELS.rotary]: ({ x, cos, sin }, b, { sign }) =>
    b.runWebGPUProgram(rotaryProgram(rowsCols(x!)), [x!, cos!, sin!], 'float32', [
      { type: 'int32', data: [cos!.shape[1] as number] },
      { type: 'float32', data: [sign as number] },
    ]),
  [GPU_KERNELS.attention]: ({ q, k, v, mask }, b, attrs) => {
    const d = attentionDims(q!, attrs);
    return b.runWebGPUProgram(
      attentionForwardProgram(d),
      [q!, k!, v!, mask!],
      'float32',
      attentionUniforms(d),
    );
  },
  [GPU_KERNELS.prefixAttention]: ({ q, kOwn, vOwn, kPre, vPre, mask }, b, attrs) => {
    const [rows, kvHeads, seq, hd] = kOwn!.shape as number[];
    const [groups, , pre] = kPre!.shape as number[];
    const heads = (q!.shape[1] as number) / hd!;
    const d = {
      rows: rows!,
      seq: seq!,
      groups: groups!,
      pre: pre!,
      heads,
      kvHeads: kvHeads!,
      hd: hd!,
      scale: 1 / Math.sqrt(hd!),
    };
    return b.runWebGPUProgram(
      prefixAttentionProgram(d),
      [q!, kOwn!, vOwn!, kPre!, vPre!, mask!],
      'float32',
      [
        { type: 'int32', data: [d.rows] },
        { type: 'int32', data: [d.seq] },
        { type: 'int32', data: [d.rows / d.groups] },
        { type: 'int32', data: [d.pre] },
        { type: 'int32', data: [d.heads] },
        { type: 'int32', data: [d.heads / d.kvHeads] },
        { type: 'float32', data: [d.scale] },
      ],
    );
  },
  // `back` (the inverse ranges, for the gradient) is an input of the op but not of the program.
  [GPU_KERNELS.rangeAttention]: ({ q, k, v, ranges }, b, attrs) => {
    const d = rangeDims(q!, k!, attrs);
    return b.runWebGPUProgram(
      rangeAttentionProgram(d),
      [q!, k!, v!, ranges!],
      'float32',
      rangeUniforms(d),
    );
  },
  [GPU_KERNELS.rangeAttentionStats]: ({ q, k, ranges, o, dy }, b, attrs) => {
    const d = rangeDims(q!, k!, attrs);
    return b.runWebGPUProgram(
      rangeAttentionStatsProgram(d),
      [q!, k!, ranges!, o!, dy!],
      'float32',
      rangeUniforms(d),
    );
  },
  [GPU_KERNELS.rangeAttentionGradQ]: ({ q, k, v, ranges, stats, dy }, b, attrs) => {
    const d = rangeDims(q!, k!, attrs);
    return b.runWebGPUProgram(
      rangeAttentionGradQProgram(d),
      [q!, k!, v!, ranges!, stats!, dy!],
      'float32',
      rangeUniforms(d),
    );
  },
  [GPU_KERNELS.rangeAttentionGradKV]: ({ q, k, v, back, stats, dy }, b, attrs) => {
    const d = rangeDims(q!, k!, attrs);
    return b.runWebGPUProgram(
      rangeAttentionGradKVProgram(d, attrs.which as 'k' | 'v'),
      [q!, k!, v!, back!, stats!, dy!],
      'float32',
      rangeUniforms(d),
    );
  },
  [GPU_KERNELS.sampleTokens]: ({ logits, u }, b, { temperature, topK }) => {
    const [rows, cols] = rowsCols(logits!);
    const record = b.runWebGPUProgram(
      sampleTokensProgram(rows, cols),
      [logits!, u!],
      'int32',
      rowUniforms(rows, cols, [
        { type: 'float32', data: [temperature as number] },
        { type: 'int32', data: [topK as number] },
      ]),
    );
    // The ids alone, for the next step's embedding lookup: a copy of the record's first part.
    const backend = b as unknown as Backend;
    const ids = backend.makeTensorInfo([rows], 'int32');
    copy(backend, [{ from: record, fromOffset: 0, to: ids, toOffset: 0, count: rows }]);
    return [ids, record];
  },
  [GPU_KERNELS.cacheAttention]: ({ q, k, v, lens }, b, { heads, prompt, extra }) => {
    const [, rows, kvWidth] = k!.shape as number[];
    const hd = (q!.shape[1] as number) / (heads as number);
    const kvHeads = kvWidth! / hd;
    return b.runWebGPUProgram(
      cacheAttentionProgram({ rows: rows!, heads: heads as number, kvHeads, hd }),
      [q!, k!, v!, lens!],
      'float32',
      [
        { type: 'int32', data: [rows!] },
        { type: 'int32', data: [heads as number] },
        { type: 'int32', data: [(heads as number) / kvHeads] },
        { type: 'int32', data: [prompt as number] },
        { type: 'int32', data: [extra as number] },
        { type: 'float32', data: [1 / Math.sqrt(hd)] },
      ],
    );
  },
  [GPU_KERNELS.attentionStats]: ({ q, k, mask, o, dy }, b, attrs) => {
    const d = attentionDims(q!, attrs);
    return b.runWebGPUProgram(
      attentionStatsProgram(d),
      [q!, k!, mask!, o!, dy!],
      'float32',
      attentionUniforms(d),
    );
  },
  [GPU_KERNELS.attentionGradQ]: attentionGrad(attentionGradQProgram),
  [GPU_KERNELS.attentionGradK]: attentionGrad((d) => attentionGradKVProgram(d, 'k')),
  [GPU_KERNELS.attentionGradV]: attentionGrad((d) => attentionGradKVProgram(d, 'v')),
  [PACKED_KERNELS.matMul]: ({ x, w }, b, { dtype, transposed }) => {
    const m = x!.shape[0] as number;
    const k = x!.shape[1] as number;
    // Packed [k, n/2] or [n, k/2]; float32 [k, n] or [n, k].
    const cols = (w!.shape[1] as number) * (dtype === 'float32' ? 1 : 2);
    const n = transposed ? (w!.shape[0] as number) : cols;
    return b.runWebGPUProgram(
      packedMatMulProgram(
        m,
        n,
        dtype as PackedDtype | 'float32',
        transposed as boolean,
        subgroupSize(),
      ),
      [x!, w!],
      'float32',
      [
        { type: 'int32', data: [m] },
        { type: 'int32', data: [k] },
        { type: 'int32', data: [n] },
      ],
    );
  },
  [PACKED_KERNELS.gather]: ({ w, ids }, b, { dtype }) => {
    const cols = 2 * (w!.shape[1] as number);
    return b.runWebGPUProgram(
      packedGatherProgram(ids!.shape[0] as number, cols, dtype as PackedDtype),
      [w!, ids!],
      'float32',
      [{ type: 'int32', data: [cols] }],
    );
  },
  [PACKED_KERNELS.unpack]: ({ w }, b, { dtype }) =>
    b.runWebGPUProgram(
      unpackProgram(w!.shape[0] as number, 2 * (w!.shape[1] as number), dtype as PackedDtype),
      [w!],
      'float32',
    ),
  [PACKED_KERNELS.pack]: ({ x }, b, { dtype }) =>
    b.runWebGPUProgram(
      packProgram(x!.shape[0] as number, x!.shape[1] as number, dtype as PackedDtype),
      [x!],
      'int32',
    ),
  [PACKED_KERNELS.randomNormal]: (_inputs, b, { rows, cols, dtype, seed, mean, std }) =>
    b.runWebGPUProgram(
      randomPackedProgram(rows as number, cols as number, dtype as PackedDtype),
      [],
      'int32',
      [
        { type: 'int32', data: [seed as number] },
        { type: 'float32', data: [mean as number] },
        { type: 'float32', data: [std as number] },
      ],
    ),
  [GPU_KERNELS.logProbStats]: ({ logits, targets }, b) => {
    const [rows, cols] = rowsCols(logits!);
    return b.runWebGPUProgram(
      logProbStatsProgram(rows, cols),
      [logits!, targets!],
      'float32',
      rowUniforms(rows, cols),
    );
  },
  [GPU_KERNELS.logProbStatsGrad]: ({ logits, targets, dy }, b) => {
    const [rows, cols] = rowsCols(logits!);
    return b.runWebGPUProgram(
      logProbStatsGradProgram(rows, cols),
      [logits!, targets!, dy!],
      'float32',
      rowUniforms(rows, cols),
    );
  },
};

const run = (name: string, inputs: Inputs, attrs: Attrs = {}): tf.Tensor =>
  tf.engine().runKernel(name, inputs as tf.NamedTensorMap, attrs) as tf.Tensor;

let registered = false;

/**
 * tfjs-backend-webgpu's `AddN` binds every input at once, and a pipeline with more storage
 * buffers than the device's `maxStorageBuffersPerShaderStage` is invalid (the sum of 16
 * gradients' squared norms already is, on a device allowing 16). This wrapper sums at most
 * limit − 1 inputs per program, left to right, as one program would.
 */
function boundedAddN(): void {
  const stock = tf.getKernel('AddN', 'webgpu');
  if (!stock) return;
  const stockFunc = stock.kernelFunc;
  tf.unregisterKernel('AddN', 'webgpu');
  tf.registerKernel({
    ...stock,
    kernelFunc: ((args: { inputs: tf.NamedTensorInfoMap; backend: object; attrs?: Attrs }) => {
      const xs = Object.values(args.inputs) as tf.TensorInfo[];
      const backend = args.backend as {
        device: { limits: { maxStorageBuffersPerShaderStage: number } };
        disposeData(id: object): void;
      };
      const max = Math.max(2, backend.device.limits.maxStorageBuffersPerShaderStage - 1);
      const sum = (inputs: tf.TensorInfo[]) =>
        stockFunc({ ...args, inputs: inputs as unknown as tf.NamedTensorInfoMap }) as tf.TensorInfo;
      if (xs.length <= max) return sum(xs);
      let acc = sum(xs.slice(0, max));
      for (let i = max; i < xs.length; i += max - 1) {
        const next = sum([acc, ...xs.slice(i, i + max - 1)]);
        backend.disposeData(acc.dataId);
        acc = next;
      }
      return acc;
    }) as tf.KernelFunc,
  });
}

/** Register the kernels and their gradients for the webgpu backend (idempotent). */
export function registerWebGpuKernels(): void {
  if (registered) return;
  registered = true;
  boundedAddN();
  registerMultiTensorKernels();
  registerPpoLossKernels();
  registerQkvKernels();
  for (const [kernelName, f] of Object.entries(KERNELS)) {
    if (tf.getKernel(kernelName, 'webgpu')) continue;
    tf.registerKernel({
      kernelName,
      backendName: 'webgpu',
      kernelFunc: (({ inputs, backend, attrs }) =>
        f(inputs as Inputs, backend as WebGpuBackendLike, attrs ?? {})) as tf.KernelFunc,
    });
  }
  tf.registerGradient({
    kernelName: GPU_KERNELS.rmsNorm,
    inputsToSave: ['x', 'weight'],
    gradFunc: (dy, saved, attrs) => {
      const [x, weight] = saved as [tf.Tensor, tf.Tensor];
      return {
        x: () => run(GPU_KERNELS.rmsNormGradX, { x, weight, dy: dy as tf.Tensor }, attrs),
        weight: () => run(GPU_KERNELS.rmsNormGradW, { x, dy: dy as tf.Tensor }, attrs),
      };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.swiGlu,
    inputsToSave: ['gate', 'up'],
    gradFunc: (dy, saved) => {
      const [gate, up] = saved as [tf.Tensor, tf.Tensor];
      return {
        gate: () => run(GPU_KERNELS.swiGluGradGate, { gate, up, dy: dy as tf.Tensor }),
        up: () => run(GPU_KERNELS.swiGluGradUp, { gate, dy: dy as tf.Tensor }),
      };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.swiGluJoined,
    inputsToSave: ['gu'],
    gradFunc: (dy, saved) => {
      const [gu] = saved as [tf.Tensor];
      return { gu: () => run(GPU_KERNELS.swiGluJoinedGrad, { gu, dy: dy as tf.Tensor }) };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.addScaled,
    gradFunc: (dy, _saved, attrs) => ({
      a: () => dy as tf.Tensor,
      b: () => run(GPU_KERNELS.scale, { x: dy as tf.Tensor }, { scale: attrs.scale as number }),
    }),
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.rangeAttention,
    inputsToSave: ['q', 'k', 'v', 'ranges', 'back'],
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [q, k, v, ranges, back, out] = saved as tf.Tensor[];
      if (!back || !attrs.hasBack) {
        throw new Error(
          'rangeAttention: no gradient without the inverse ranges; pass `back` (the query rows that see each key row) to differentiate it',
        );
      }
      const g = dy as tf.Tensor;
      const stats = run(
        GPU_KERNELS.rangeAttentionStats,
        { q: q!, k: k!, ranges: ranges!, o: out!, dy: g },
        attrs,
      );
      // dk and dv are one program each: a thunk runs only for an input that needs a gradient.
      const gradKV = (which: 'k' | 'v') => () =>
        run(
          GPU_KERNELS.rangeAttentionGradKV,
          { q: q!, k: k!, v: v!, back, stats, dy: g },
          { ...attrs, which },
        );
      return {
        q: () =>
          run(
            GPU_KERNELS.rangeAttentionGradQ,
            { q: q!, k: k!, v: v!, ranges: ranges!, stats, dy: g },
            attrs,
          ),
        k: gradKV('k'),
        v: gradKV('v'),
        ranges: () => tf.zerosLike(ranges!),
        back: () => tf.zerosLike(back),
      };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.rotary,
    inputsToSave: ['cos', 'sin'],
    gradFunc: (dy, saved, attrs) => {
      const [cos, sin] = saved as [tf.Tensor, tf.Tensor];
      return {
        // The rotation is orthogonal: its transpose is the rotation by −θ.
        x: () =>
          run(
            GPU_KERNELS.rotary,
            { x: dy as tf.Tensor, cos, sin },
            { sign: -(attrs.sign as number) },
          ),
        cos: () => tf.zerosLike(cos),
        sin: () => tf.zerosLike(sin),
      };
    },
  });
  tf.registerGradient({
    kernelName: PACKED_KERNELS.matMul,
    inputsToSave: ['w'],
    gradFunc: (dy, saved, attrs) => {
      const [w] = saved as [tf.Tensor];
      return {
        // d(x·W)/dx = dy·Wᵀ and back: the other form with the same packed weight.
        x: () =>
          run(
            PACKED_KERNELS.matMul,
            { x: dy as tf.Tensor, w },
            { dtype: attrs.dtype as string, transposed: !attrs.transposed },
          ),
        w: () => tf.zerosLike(w),
      };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.attention,
    inputsToSave: ['q', 'k', 'v', 'mask'],
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [q, k, v, mask, out] = saved as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
      const g = dy as tf.Tensor;
      // The row constants (log-sum-exp, dO·out) once, shared by the three gradients.
      const stats = run(GPU_KERNELS.attentionStats, { q, k, mask, o: out, dy: g }, attrs);
      const inputs = { q, k, v, mask, stats, dy: g };
      return {
        q: () => run(GPU_KERNELS.attentionGradQ, inputs, attrs),
        k: () => run(GPU_KERNELS.attentionGradK, inputs, attrs),
        v: () => run(GPU_KERNELS.attentionGradV, inputs, attrs),
        mask: () => tf.zerosLike(mask),
      };
    },
  });
  tf.registerGradient({
    kernelName: GPU_KERNELS.logProbStats,
    inputsToSave: ['logits', 'targets'],
    gradFunc: (dy, saved) => {
      const [logits, targets] = saved as [tf.Tensor, tf.Tensor];
      return {
        logits: () => run(GPU_KERNELS.logProbStatsGrad, { logits, targets, dy: dy as tf.Tensor }),
        targets: () => tf.zerosLike(targets),
      };
    },
  });
}

function checkRows(op: string, a: tf.Tensor, b: tf.Tensor): void {
  if (a.shape[0] !== b.shape[0]) {
    throw new RangeError(`${op}: ${a.shape[0]} rows against ${b.shape[0]}`);
  }
}

/** The fused ops of the webgpu backend, in the {@link FusedOps} contract. */
export const webGpuFusedOps: FusedOps = {
  rmsNorm(x, weight, eps) {
    if (weight.shape[0] !== x.shape[1]) {
      throw new RangeError(`rmsNorm: weight [${weight.shape}] does not match x [${x.shape}]`);
    }
    return run(GPU_KERNELS.rmsNorm, { x, weight }, { eps }) as tf.Tensor2D;
  },
  swiGlu(gate, up) {
    return run(GPU_KERNELS.swiGlu, { gate, up }) as tf.Tensor2D;
  },
  swiGluJoined(gateUp) {
    if ((gateUp.shape[1] as number) % 2 !== 0) {
      throw new RangeError(`swiGluJoined: gate|up [${gateUp.shape}] needs an even width`);
    }
    return run(GPU_KERNELS.swiGluJoined, { gu: gateUp }) as tf.Tensor2D;
  },
  addScaled(a, b, scale) {
    if (a.shape[0] !== b.shape[0] || a.shape[1] !== b.shape[1]) {
      throw new RangeError(`addScaled: [${a.shape}] and [${b.shape}] differ`);
    }
    return run(GPU_KERNELS.addScaled, { a, b }, { scale }) as tf.Tensor2D;
  },
  rotaryEmbedding(x, cos, sin, heads) {
    checkRows('rotaryEmbedding', x, cos);
    if (x.shape[1] !== heads * 2 * (cos.shape[1] as number)) {
      throw new RangeError(
        `rotaryEmbedding: x [${x.shape}] is not ${heads} heads of ${2 * (cos.shape[1] as number)}`,
      );
    }
    return run(GPU_KERNELS.rotary, { x, cos, sin }, { sign: 1 }) as tf.Tensor2D;
  },
  attention(q, k, v, mask, { batch, heads, kvHeads }) {
    const [rows = 0, width = 0] = q.shape;
    if (heads % kvHeads !== 0 || rows % batch !== 0 || width % heads !== 0) {
      throw new RangeError(
        `attention: q [${q.shape}] is not [batch·seq, heads·hd] with batch ${batch}, ${heads} heads and ${kvHeads} kv heads (a divisor of heads)`,
      );
    }
    const seq = rows / batch;
    const hd = width / heads;
    const kvShape = `[${rows}, ${kvHeads * hd}]`;
    for (const [name, t] of [
      ['k', k],
      ['v', v],
    ] as const) {
      if (t.shape[0] !== rows || t.shape[1] !== kvHeads * hd) {
        throw new RangeError(`attention: ${name} [${t.shape}] must be ${kvShape}`);
      }
    }
    if (mask.shape[0] !== batch || mask.shape[1] !== seq || mask.shape[2] !== seq) {
      throw new RangeError(`attention: mask [${mask.shape}] must be [${batch}, ${seq}, ${seq}]`);
    }
    return run(
      GPU_KERNELS.attention,
      { q, k, v, mask },
      { batch, heads, kvHeads, scale: 1 / Math.sqrt(hd) },
    ) as tf.Tensor2D;
  },
  prefixAttention(q, kOwn, vOwn, kPre, vPre, mask) {
    const [rows = 0, kvHeads = 0, seq = 0, hd = 0] = kOwn.shape;
    const [groups = 0, kvPre = 0, pre = 0, hdPre = 0] = kPre.shape;
    if (
      kvPre !== kvHeads ||
      hdPre !== hd ||
      groups === 0 ||
      rows % groups !== 0 ||
      q.shape[0] !== rows * seq ||
      (q.shape[1] as number) % hd !== 0 ||
      ((q.shape[1] as number) / hd) % kvHeads !== 0 ||
      mask.size !== rows * seq * (pre + seq)
    ) {
      throw new RangeError(
        `prefixAttention: q [${q.shape}], own keys [${kOwn.shape}], prefix keys [${kPre.shape}] and mask [${mask.shape}] do not fit (q [rows·seq, heads·hd], own [rows, kvHeads, seq, hd], prefix [groups, kvHeads, pre, hd] with groups dividing rows, mask of rows·seq·(pre + seq) values)`,
      );
    }
    return run(GPU_KERNELS.prefixAttention, { q, kOwn, vOwn, kPre, vPre, mask }) as tf.Tensor2D;
  },
  splitQkv,
  rangeAttention(q, k, v, ranges, { kvHeads, back }) {
    const [rows = 0, width = 0] = q.shape;
    const kw = k.shape[1] ?? 0;
    if (
      !Number.isInteger(kvHeads) ||
      kvHeads < 1 ||
      kw % kvHeads !== 0 ||
      width % (kw / kvHeads) !== 0 ||
      (width / (kw / kvHeads)) % kvHeads !== 0 ||
      k.shape[0] !== rows ||
      v.shape[0] !== rows ||
      v.shape[1] !== kw ||
      ranges.dtype !== 'int32' ||
      ranges.size !== 4 * rows
    ) {
      throw new RangeError(
        `rangeAttention: q [${q.shape}], k [${k.shape}], v [${v.shape}] and ranges ${ranges.dtype} [${ranges.shape}] do not fit (q [rows, heads·hd], k and v [rows, kvHeads·hd] with ${kvHeads} kv heads dividing the heads, ranges int32 of 4·rows values)`,
      );
    }
    if (back && (back.dtype !== 'int32' || back.size !== 4 * rows)) {
      throw new RangeError(
        `rangeAttention: back ${back.dtype} [${back.shape}] must be int32 of 4·rows values (two ranges of query rows per key row)`,
      );
    }
    // Without `back` the ranges stand in for it (the gradient then refuses to run).
    return run(
      GPU_KERNELS.rangeAttention,
      { q, k, v, ranges, back: back ?? ranges },
      { kvHeads, hasBack: back !== undefined },
    ) as tf.Tensor2D;
  },
  sampleTokens(logits, u, { temperature, topK }) {
    const [rows = 0, vocab = 0] = logits.shape;
    if (logits.dtype !== 'float32' || u.dtype !== 'int32' || u.shape[0] !== rows) {
      throw new RangeError(
        `sampleTokens: needs float32 logits [rows, vocab] and the bits of the uniforms as int32 [rows], got ${logits.dtype} [${logits.shape}] and ${u.dtype} [${u.shape}]`,
      );
    }
    if (vocab < 1 || vocab >= 2 ** 24) {
      throw new RangeError(`sampleTokens: a vocabulary of ${vocab} is outside 1 .. 2^24 − 1`);
    }
    if (!(temperature >= 0) || !Number.isFinite(temperature)) {
      throw new RangeError(`sampleTokens: temperature must be finite and >= 0, got ${temperature}`);
    }
    if (!Number.isInteger(topK) || topK < 0) {
      throw new RangeError(`sampleTokens: topK must be an integer >= 0, got ${topK}`);
    }
    const [ids, record] = tf
      .engine()
      .runKernel(GPU_KERNELS.sampleTokens, { logits, u } as unknown as tf.NamedTensorMap, {
        temperature,
        topK,
      }) as unknown as [tf.Tensor1D, tf.Tensor1D];
    return { ids, record };
  },
  cacheAttention(q, k, v, lens, { heads, prompt, extra }) {
    const [rows = 0, width = 0] = q.shape;
    const [slots = 0, kRows = 0, kvWidth = 0] = k.shape;
    const hd = width / heads;
    if (
      !Number.isInteger(hd) ||
      kRows !== rows ||
      kvWidth % hd !== 0 ||
      heads % (kvWidth / hd) !== 0 ||
      v.shape.join() !== k.shape.join() ||
      lens.shape[0] !== rows ||
      lens.dtype !== 'int32' ||
      !Number.isInteger(prompt) ||
      !Number.isInteger(extra) ||
      prompt < 0 ||
      extra < 0 ||
      prompt + extra > slots
    ) {
      throw new RangeError(
        `cacheAttention: q [${q.shape}], cache [${k.shape}] / [${v.shape}], lens ${lens.dtype} [${lens.shape}], prompt ${prompt} and extra ${extra} do not fit (q [rows, heads·hd], k and v [slots, rows, kvHeads·hd] with kvHeads dividing heads, lens int32 [rows], prompt + extra ≤ slots)`,
      );
    }
    return run(
      GPU_KERNELS.cacheAttention,
      { q, k, v, lens },
      { heads, prompt, extra },
    ) as tf.Tensor2D;
  },
  writeCacheSlot(cache, rows, slot) {
    const [slots = 0, n = 0, width = 0] = cache.shape;
    if (cache.dtype !== rows.dtype || rows.shape[0] !== n || rows.shape[1] !== width) {
      throw new RangeError(
        `writeCacheSlot: rows ${rows.dtype} [${rows.shape}] do not fit a slot of the cache ${cache.dtype} [${cache.shape}]`,
      );
    }
    if (!Number.isInteger(slot) || slot < 0 || slot >= slots) {
      throw new RangeError(`writeCacheSlot: slot ${slot} is outside 0 .. ${slots - 1}`);
    }
    copy(tf.backend() as unknown as Backend, [
      { from: rows, fromOffset: 0, to: cache, toOffset: slot * n * width, count: n * width },
    ]);
  },
  logProbStats(logits, targets) {
    const n = logits.shape[0];
    return tf.tidy(() => {
      const both = run(GPU_KERNELS.logProbStats, {
        logits,
        targets: tf.tensor1d(targets, 'int32'),
      }) as tf.Tensor1D;
      const [logProbs, entropies] = tf.split(both, [n, n]) as [tf.Tensor1D, tf.Tensor1D];
      return { logProbs, entropies };
    });
  },
};
