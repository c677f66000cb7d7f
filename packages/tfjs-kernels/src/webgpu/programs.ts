/*
 * WGSL programs for tfjs-backend-webgpu's program interface (`backend.runWebGPUProgram`). The
 * backend prepends the declarations each program relies on: `result` (the output buffer), one
 * read-only array per name in `variableNames`, `uniforms` (shapes, `size`, and the fields listed
 * in `uniforms`), `localId`, and `main(index)` called with the invocation's global index.
 *
 * Two shapes of program:
 * - elementwise: one invocation per output element (`index < uniforms.size`);
 * - per row: one workgroup of `WG` invocations per row of a [rows, cols] input, reducing over the
 *   row in workgroup memory (row = index / WG, lane = localId.x). Workgroup barriers must be
 *   reached by every invocation, so out-of-range rows are clamped for reading and only writes are
 *   guarded.
 */

/** What tfjs-backend-webgpu needs of a program. */
export interface GpuProgram {
  variableNames: string[];
  outputShape: number[];
  shaderKey: string;
  dispatchLayout: { x: number[] };
  dispatch: [number, number, number];
  workgroupSize: [number, number, number];
  size?: boolean;
  uniforms?: string;
  getUserCode(): string;
}

const ELEMENTWISE_WG = 128;

/**
 * An elementwise program: `body` runs once per output element, with `index` in range, after the
 * WGSL declarations of `prelude` (helper functions).
 */
export function elementwise(
  key: string,
  variableNames: string[],
  outputShape: number[],
  body: string,
  uniforms?: string,
  prelude?: string,
): GpuProgram {
  const n = outputShape.reduce((a, b) => a * b, 1);
  return {
    variableNames,
    outputShape,
    shaderKey: key,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: [Math.ceil(n / ELEMENTWISE_WG), 1, 1],
    workgroupSize: [ELEMENTWISE_WG, 1, 1],
    size: true,
    ...(uniforms ? { uniforms } : {}),
    getUserCode: () => `${
      prelude === undefined
        ? ''
        : `
      ${prelude}`
    }
      fn main(index : i32) {
        if (index < uniforms.size) {
          ${body}
        }
      }`,
  };
}

/** Workgroup size of a per-row program: a power of two, at most 256, about the row length. */
function rowWorkgroup(cols: number): number {
  let wg = 32;
  while (wg < 256 && wg < cols) wg *= 2;
  return wg;
}

/**
 * WGSL of `fn name(v : f32) -> f32`, combining `v` over the workgroup with `combine` (a tree in
 * the workgroup array `partial`); every invocation gets the result. Every invocation must call it
 * the same number of times (it holds barriers).
 */
export function workgroupReduce(name: string, combine: (a: string, b: string) => string): string {
  return `fn ${name}(v : f32) -> f32 {
        let lane = i32(localId.x);
        partial[lane] = v;
        workgroupBarrier();
        for (var k : i32 = WG / 2; k > 0; k = k / 2) {
          if (lane < k) { partial[lane] = ${combine('partial[lane]', 'partial[lane + k]')}; }
          workgroupBarrier();
        }
        if (lane == 0) { total = partial[0]; }
        workgroupBarrier();
        let t = total;
        workgroupBarrier();
        return t;
      }`;
}

/**
 * A per-row program: `rows` workgroups of WG invocations. `body` sees `row` (clamped to a valid
 * row), `live` (false for padding workgroups), `lane`, `WG`, and the helpers `reduceSum(v)` and
 * `reduceMax(v)` over the workgroup (every invocation must call them the same number of times);
 * `helpers` is WGSL placed before `main` (functions of the program's own).
 */
export function perRow(
  key: string,
  variableNames: string[],
  outputShape: number[],
  rows: number,
  cols: number,
  body: string,
  uniforms?: string,
  helpers = '',
): GpuProgram {
  const wg = rowWorkgroup(cols);
  return {
    variableNames,
    outputShape,
    shaderKey: key,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: [rows, 1, 1],
    workgroupSize: [wg, 1, 1],
    uniforms: `rows : i32, cols : i32, ${uniforms ?? ''}`,
    getUserCode: () => `
      const WG : i32 = ${wg};
      var<workgroup> partial : array<f32, ${wg}>;
      var<workgroup> total : f32;
      ${workgroupReduce('reduceSum', (a, b) => `${a} + ${b}`)}
      ${workgroupReduce('reduceMax', (a, b) => `max(${a}, ${b})`)}
      ${helpers}
      fn main(index : i32) {
        let live = index / WG < uniforms.rows;
        let row = min(index / WG, uniforms.rows - 1);
        let lane = i32(localId.x);
        let cols = uniforms.cols;
        ${body}
      }`,
  };
}

/** Uniform values of a per-row program (rows, cols, then the program's own). */
export function rowUniforms(
  rows: number,
  cols: number,
  extra: Array<{ type: 'float32' | 'int32'; data: number[] }> = [],
): Array<{ type: string; data: number[] }> {
  return [{ type: 'int32', data: [rows] }, { type: 'int32', data: [cols] }, ...extra];
}

/** y = x · rsqrt(mean(x²) + eps) · w over each row of x [rows, cols]. */
export function rmsNormProgram(rows: number, cols: number): GpuProgram {
  return perRow(
    'poad_rms_norm',
    ['x', 'w'],
    [rows, cols],
    rows,
    cols,
    `
        var s = 0.0;
        for (var c = lane; c < cols; c = c + WG) { let v = x[row * cols + c]; s = s + v * v; }
        let r = inverseSqrt(reduceSum(s) / f32(cols) + uniforms.eps);
        if (live) {
          for (var c = lane; c < cols; c = c + WG) {
            result[row * cols + c] = x[row * cols + c] * r * w[c];
          }
        }`,
    'eps : f32,',
  );
}

/** rsqrt(mean(x²) + eps) of each row of x [rows, cols], as [rows]. */
export function rowRstdProgram(rows: number, cols: number): GpuProgram {
  return perRow(
    'poad_row_rstd',
    ['x'],
    [rows],
    rows,
    cols,
    `
        var s = 0.0;
        for (var c = lane; c < cols; c = c + WG) { let v = x[row * cols + c]; s = s + v * v; }
        let r = inverseSqrt(reduceSum(s) / f32(cols) + uniforms.eps);
        if (live && lane == 0) { result[row] = r; }`,
    'eps : f32,',
  );
}

/**
 * RMSNorm input gradient: with r = rstd, n = x·r and g = dy·w,
 * dx = r · (g − n · mean(g·n)) = r·dy·w − x · r³ · Σ(dy·w·x) / cols.
 */
export function rmsNormGradXProgram(rows: number, cols: number): GpuProgram {
  return perRow(
    'poad_rms_norm_dx',
    ['x', 'w', 'dy'],
    [rows, cols],
    rows,
    cols,
    `
        var s = 0.0;
        var t = 0.0;
        for (var c = lane; c < cols; c = c + WG) {
          let v = x[row * cols + c];
          s = s + v * v;
          t = t + dy[row * cols + c] * w[c] * v;
        }
        let r = inverseSqrt(reduceSum(s) / f32(cols) + uniforms.eps);
        let k = r * r * r * reduceSum(t) / f32(cols);
        if (live) {
          for (var c = lane; c < cols; c = c + WG) {
            let i = row * cols + c;
            result[i] = r * dy[i] * w[c] - x[i] * k;
          }
        }`,
    'eps : f32,',
  );
}

/**
 * RMSNorm weight gradient: dw[c] = Σ_rows dy·x·rstd, one invocation per column (uniforms `rows`
 * and `cols`; rstd from {@link rowRstdProgram}).
 */
export function rmsNormGradWProgram(cols: number): GpuProgram {
  return elementwise(
    'poad_rms_norm_dw',
    ['x', 'dy', 'rstd'],
    [cols],
    `
          var s = 0.0;
          for (var r = 0; r < uniforms.rows; r = r + 1) {
            let i = r * uniforms.cols + index;
            s = s + dy[i] * x[i] * rstd[r];
          }
          result[index] = s;`,
    'rows : i32, cols : i32,',
  );
}

/** silu(gate) · up. */
export function swiGluProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_swiglu',
    ['gate', 'up'],
    shape,
    `
          let g = gate[index];
          result[index] = g / (1.0 + exp(-g)) * up[index];`,
  );
}

/** d/dgate of silu(gate)·up: dy · up · s · (1 + gate·(1 − s)), s = sigmoid(gate). */
export function swiGluGradGateProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_swiglu_dgate',
    ['gate', 'up', 'dy'],
    shape,
    `
          let g = gate[index];
          let s = 1.0 / (1.0 + exp(-g));
          result[index] = dy[index] * up[index] * s * (1.0 + g * (1.0 - s));`,
  );
}

/** d/dup of silu(gate)·up: dy · silu(gate). */
export function swiGluGradUpProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_swiglu_dup',
    ['gate', 'dy'],
    shape,
    `
          let g = gate[index];
          result[index] = dy[index] * g / (1.0 + exp(-g));`,
  );
}

/**
 * Rotate-half rotary embedding of x [rows, heads·hd] with per-row tables cos/sin [rows, hd/2]:
 * out = x·cos + rotate_half(x)·sign·sin, rotate_half([x1, x2]) = [−x2, x1]. Uniforms: `half`
 * (hd/2) and `sign`; sign = −1 applies the inverse rotation, which is the backward pass.
 */
export function rotaryProgram(shape: [number, number]): GpuProgram {
  return elementwise(
    'poad_rotary',
    ['x', 'cosT', 'sinT'],
    shape,
    `
          let width = uniforms.outShape[1];
          let half = uniforms.half;
          let row = index / width;
          let col = index - row * width;
          let head = col / (2 * half);
          let i = col - head * 2 * half;
          let f = i % half;
          let c = cosT[row * half + f];
          let s = uniforms.sign * sinT[row * half + f];
          let base = row * width + head * 2 * half;
          if (i < half) {
            result[index] = x[base + i] * c - x[base + i + half] * s;
          } else {
            result[index] = x[base + i] * c + x[base + i - half] * s;
          }`,
    'half : i32, sign : f32,',
  );
}

/**
 * WGSL of a per-row program computing, for the row's logits z, `zmax` = max z, `logSum` =
 * log Σ e^(z−zmax) (so lse = zmax + logSum) and `entropy` = lse − Σ p·z, in two passes.
 */
const ROW_SOFTMAX_STATS = `
        var m = -3.402823e+38;
        for (var c = lane; c < cols; c = c + WG) { m = max(m, z[row * cols + c]); }
        let zmax = reduceMax(m);
        var se = 0.0;
        var sez = 0.0;
        for (var c = lane; c < cols; c = c + WG) {
          let d = z[row * cols + c] - zmax;
          let e = exp(d);
          se = se + e;
          sez = sez + e * d;
        }
        let sum = reduceSum(se);
        let logSum = log(sum);
        let entropy = logSum - reduceSum(sez) / sum;`;

/**
 * Log-probability of each row's target and the entropy of softmax(z) for logits z [rows, cols],
 * written as [2·rows]: log-probs first, then entropies. lp = z_t − lse; H = lse − Σ p·z.
 */
export function logProbStatsProgram(rows: number, cols: number): GpuProgram {
  return perRow(
    'poad_log_prob_stats',
    ['z', 'targets'],
    [2 * rows],
    rows,
    cols,
    `${ROW_SOFTMAX_STATS}
        if (live && lane == 0) {
          result[row] = z[row * cols + targets[row]] - zmax - logSum;
          result[uniforms.rows + row] = entropy;
        }`,
  );
}

/**
 * Gradient of [log-probs; entropies] w.r.t. the logits, given its upstream gradient dy [2·rows]
 * (gl = dy[row], gh = dy[rows + row]): dz_j = gl·(δ_jt − p_j) − gh·p_j·(log p_j + H).
 */
export function logProbStatsGradProgram(rows: number, cols: number): GpuProgram {
  return perRow(
    'poad_log_prob_stats_grad',
    ['z', 'targets', 'dy'],
    [rows, cols],
    rows,
    cols,
    `${ROW_SOFTMAX_STATS}
        let gl = dy[row];
        let gh = dy[uniforms.rows + row];
        let t = targets[row];
        if (live) {
          for (var c = lane; c < cols; c = c + WG) {
            let logp = z[row * cols + c] - zmax - logSum;
            let p = exp(logp);
            var g = -gl * p - gh * p * (logp + entropy);
            if (c == t) { g = g + gl; }
            result[row * cols + c] = g;
          }
        }`,
  );
}

/** silu(gate) · up for gu [rows, 2f] holding gate | up side by side: out [rows, f]. */
export function swiGluJoinedProgram(rows: number, f: number): GpuProgram {
  return elementwise(
    'poad_swiglu_joined',
    ['gu'],
    [rows, f],
    `
          let f = uniforms.outShape[1];
          let row = index / f;
          let g = gu[row * 2 * f + index % f];
          result[index] = g / (1.0 + exp(-g)) * gu[row * 2 * f + f + index % f];`,
  );
}

/**
 * Gradient of {@link swiGluJoinedProgram}, [rows, 2f]: d/dgate = dy · up · s · (1 + gate·(1 − s))
 * in the first f columns, d/dup = dy · silu(gate) in the last f (s = sigmoid(gate)).
 */
export function swiGluJoinedGradProgram(rows: number, f: number): GpuProgram {
  return elementwise(
    'poad_swiglu_joined_grad',
    ['gu', 'dy'],
    [rows, 2 * f],
    `
          let w = uniforms.outShape[1];
          let f = w / 2;
          let row = index / w;
          let col = index % w;
          let c = col % f;
          let g = gu[row * w + c];
          let s = 1.0 / (1.0 + exp(-g));
          let d = dy[row * f + c];
          if (col < f) {
            result[index] = d * gu[row * w + f + c] * s * (1.0 + g * (1.0 - s));
          } else {
            result[index] = d * g * s;
          }`,
  );
}

/** a + scale · b (same shapes); uniform `scale`. */
export function addScaledProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_add_scaled',
    ['a', 'b'],
    shape,
    `
          result[index] = a[index] + uniforms.scale * b[index];`,
    'scale : f32,',
  );
}

/** scale · x; uniform `scale`. */
export function scaleProgram(shape: number[]): GpuProgram {
  return elementwise(
    'poad_scale',
    ['x'],
    shape,
    `
          result[index] = uniforms.scale * x[index];`,
    'scale : f32,',
  );
}
