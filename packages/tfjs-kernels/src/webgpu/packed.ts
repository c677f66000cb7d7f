import { elementwise, type GpuProgram } from './programs.js';
import { isSubgroupSize, SUBGROUP_MARKER, SUBGROUP_PROBE_LANES } from './subgroups.js';

/*
 * Weights kept in their checkpoint's 16-bit precision on webgpu. A [rows, cols] bfloat16 or
 * float16 matrix is stored as an int32 tensor [rows, cols/2]: element (r, 2c) in the low 16 bits
 * of word (r, c), element (r, 2c + 1) in the high 16 bits. The programs unpack inside the kernel
 * and accumulate in float32: bfloat16 → float32 is a 16-bit shift (exact), float16 → float32 is
 * WGSL's `unpack2x16float` (exact, no `shader-f16` feature needed).
 */

/** Storage precisions of a packed weight. */
export type PackedDtype = 'bfloat16' | 'float16';

/** WGSL of `unpackLo(w)` and `unpackHi(w)`: the two values of a packed word, as f32. */
function unpackFns(dtype: PackedDtype): string {
  if (dtype === 'bfloat16') {
    return `
      fn unpackLo(w : i32) -> f32 { return bitcast<f32>(bitcast<u32>(w) << 16u); }
      fn unpackHi(w : i32) -> f32 { return bitcast<f32>(bitcast<u32>(w) & 0xffff0000u); }`;
  }
  return `
      fn unpackLo(w : i32) -> f32 { return unpack2x16float(bitcast<u32>(w)).x; }
      fn unpackHi(w : i32) -> f32 { return unpack2x16float(bitcast<u32>(w)).y; }`;
}

/** Output tile of the matmul programs (rows × cols), reduction tile, invocations per workgroup. */
const TM = 64;
const TN = 64;
const TK = 16;
// The lanes whose subgroup layout the device's probe checked (the shuffling form relies on it).
const WG = SUBGROUP_PROBE_LANES;

/**
 * A tiled product with a packed weight, float32 accumulation:
 * - `transposed` false: y [m, n] = x [m, k] · W, W packed [k, n/2];
 * - `transposed` true: y [m, n] = x [m, k] · Wᵀ, W packed [n, k/2] (the input gradient of the
 *   first form, and the tied LM head's logits from a packed embedding).
 * `dtype` 'float32' reads an unpacked float32 W ([k, n], or [n, k] transposed) the same way, so
 * that the tiled product can be compared with TF.js's own for float32 weights.
 * Each workgroup computes a 64 × 64 output tile (4 × 4 per invocation) from 64 × 16 and 16 × 64
 * tiles in workgroup memory (8 KiB); TF.js's own matmul uses 32 × 32 tiles. Uniforms `m`, `k`, `n`.
 *
 * With `subgroupSize` S (the device's, checked to lay its subgroups out as contiguous runs of
 * the workgroup's lanes: {@link ./subgroups.ts}), the 64 × 16 input tile skips workgroup memory:
 * the L = min(S, 16) lanes of one subgroup that share four output rows each load 64 / L of
 * those rows' values straight into registers, and every lane takes the value it needs at each
 * reduction step from the lane holding it with `subgroupShuffle`. Half the workgroup memory and
 * one store pass per reduction tile fewer; the same products in the same order, so the same
 * results.
 */
export function packedMatMulProgram(
  m: number,
  n: number,
  dtype: PackedDtype | 'float32',
  transposed: boolean,
  subgroupSize: number | null = null,
): GpuProgram {
  const colTiles = Math.ceil(n / TN);
  const rowTiles = Math.ceil(m / TM);
  // The weight tile: 16 × 64 values, loaded as 512 words (or, float32, 1,024 values).
  const loadW =
    dtype === 'float32'
      ? transposed
        ? // W[n, k]: neighbouring lanes read neighbours along k of one output column.
          `for (var t = lane; t < ${TK * TN}; t = t + ${WG}) {
          let c = t / ${TK};
          let kk = t % ${TK};
          let col = col0 + c;
          let kr = k0 + kk;
          var w = 0.0;
          if (col < uniforms.n && kr < uniforms.k) { w = wp[col * uniforms.k + kr]; }
          tb[kk * ${TN} + c] = w;
        }`
        : `for (var t = lane; t < ${TK * TN}; t = t + ${WG}) {
          let kk = t / ${TN};
          let c = t % ${TN};
          let col = col0 + c;
          let kr = k0 + kk;
          var w = 0.0;
          if (col < uniforms.n && kr < uniforms.k) { w = wp[kr * uniforms.n + col]; }
          tb[t] = w;
        }`
      : transposed
        ? // W[n, k]: a word holds two neighbours along k (kk, kk + 1) of one output column.
          `for (var t = lane; t < ${(TK / 2) * TN}; t = t + ${WG}) {
          let p = t / ${TN};
          let c = t % ${TN};
          let col = col0 + c;
          let kk = k0 + 2 * p;
          var w = 0;
          if (col < uniforms.n && kk < uniforms.k) { w = wp[col * (uniforms.k / 2) + kk / 2]; }
          tb[(2 * p) * ${TN} + c] = unpackLo(w);
          tb[(2 * p + 1) * ${TN} + c] = unpackHi(w);
        }`
        : // W[k, n]: a word holds two neighbours along n of one reduction row.
          `for (var t = lane; t < ${TK * (TN / 2)}; t = t + ${WG}) {
          let kk = t / ${TN / 2};
          let p = t % ${TN / 2};
          let col = col0 + 2 * p;
          let kr = k0 + kk;
          var w = 0;
          if (col < uniforms.n && kr < uniforms.k) { w = wp[kr * (uniforms.n / 2) + col / 2]; }
          tb[kk * ${TN} + 2 * p] = unpackLo(w);
          tb[kk * ${TN} + 2 * p + 1] = unpackHi(w);
        }`;
  const S = subgroupSize;
  if (S !== null && !isSubgroupSize(S)) {
    throw new RangeError(`packedMatMulProgram: subgroup size ${S} is not a power of two in 4..128`);
  }
  // The input tile: through workgroup memory, or (subgroups) into registers.
  const L = S === null ? 0 : Math.min(S, 16);
  const J = S === null ? 0 : TK / L;
  const declareA =
    S === null ? `var<workgroup> ta : array<f32, ${TM * TK}>;` : `${SUBGROUP_MARKER}`;
  const loadA =
    S === null
      ? `for (var t = lane; t < ${TM * TK}; t = t + ${WG}) {
            let r = row0 + t / ${TK};
            let kx = k0 + t % ${TK};
            var a = 0.0;
            if (r < uniforms.m && kx < uniforms.k) { a = x[r * uniforms.k + kx]; }
            ta[t] = a;
          }`
      : // Rows tr..tr+3 at reduction positions g, g + L, …: this lane's share of the tile.
        `for (var i = 0; i < 4; i = i + 1) {
            let r = row0 + tr + i;
            for (var j = 0; j < ${J}; j = j + 1) {
              let kx = k0 + g + j * ${L};
              var a = 0.0;
              if (r < uniforms.m && kx < uniforms.k) { a = x[r * uniforms.k + kx]; }
              areg[i * ${J} + j] = a;
            }
          }`;
  const readA =
    S === null
      ? `for (var i = 0; i < 4; i = i + 1) { a4[i] = ta[(tr + i) * ${TK} + kk]; }`
      : `let src = base + u32(kk % ${L});
            for (var i = 0; i < 4; i = i + 1) {
              a4[i] = subgroupShuffle(areg[i * ${J} + kk / ${L}], src);
            }`;
  const laneSetUp =
    S === null
      ? ''
      : `// Subgroups are contiguous runs of ${S} lanes; the ${L} lanes of a run that share tr.
        let g = lane % ${L};
        let base = u32(lane % ${S} - g);
        var areg : array<f32, ${4 * J}>;`;
  return {
    variableNames: ['x', 'wp'],
    outputShape: [m, n],
    shaderKey: `poad_packed_matmul_${dtype}_${transposed ? 't' : 'n'}${S === null ? '' : `_sg${S}`}`,
    dispatchLayout: { x: [0, 1] },
    dispatch: [colTiles, rowTiles, 1],
    workgroupSize: [WG, 1, 1],
    uniforms: 'm : i32, k : i32, n : i32,',
    getUserCode: () => `
      ${dtype === 'float32' ? '' : unpackFns(dtype)}
      ${declareA}
      var<workgroup> tb : array<f32, ${TK * TN}>;
      fn main(index : i32) {
        let lane = i32(localId.x);
        // Shapes come from uniforms only: one compiled program serves every shape.
        let colTiles = (uniforms.n + ${TN - 1}) / ${TN};
        let tile = index / ${WG};
        let col0 = (tile % colTiles) * ${TN};
        let row0 = (tile / colTiles) * ${TM};
        let tr = (lane / 16) * 4;
        let tc = (lane % 16) * 4;
        ${laneSetUp}
        var acc : array<f32, 16>;
        for (var i = 0; i < 16; i = i + 1) { acc[i] = 0.0; }
        for (var k0 = 0; k0 < uniforms.k; k0 = k0 + ${TK}) {
          ${loadA}
          ${loadW}
          workgroupBarrier();
          for (var kk = 0; kk < ${TK}; kk = kk + 1) {
            var a4 : array<f32, 4>;
            ${readA}
            for (var j = 0; j < 4; j = j + 1) {
              let b = tb[kk * ${TN} + tc + j];
              for (var i = 0; i < 4; i = i + 1) { acc[i * 4 + j] = acc[i * 4 + j] + a4[i] * b; }
            }
          }
          workgroupBarrier();
        }
        for (var i = 0; i < 4; i = i + 1) {
          let r = row0 + tr + i;
          for (var j = 0; j < 4; j = j + 1) {
            let c = col0 + tc + j;
            if (r < uniforms.m && c < uniforms.n) { result[r * uniforms.n + c] = acc[i * 4 + j]; }
          }
        }
      }`,
  };
}

/** Rows `ids` of a packed [vocab, cols/2] matrix as float32 [ids, cols] (the embedding lookup). */
export function packedGatherProgram(rows: number, cols: number, dtype: PackedDtype): GpuProgram {
  return elementwise(
    `poad_packed_gather_${dtype}`,
    ['wp', 'ids'],
    [rows, cols],
    `let r = index / uniforms.cols;
          let c = index % uniforms.cols;
          let w = wp[ids[r] * (uniforms.cols / 2) + c / 2];
          if (c % 2 == 0) { result[index] = unpackLo(w); } else { result[index] = unpackHi(w); }`,
    'cols : i32,',
    unpackFns(dtype),
  );
}

/** A packed [rows, cols/2] matrix unpacked to float32 [rows, cols]. */
export function unpackProgram(rows: number, cols: number, dtype: PackedDtype): GpuProgram {
  return elementwise(
    `poad_unpack_${dtype}`,
    ['wp'],
    [rows, cols],
    `let w = wp[index / 2];
          if (index % 2 == 0) { result[index] = unpackLo(w); } else { result[index] = unpackHi(w); }`,
    undefined,
    unpackFns(dtype),
  );
}

/** WGSL of `packPair(lo, hi) -> i32`: two float32 values as one packed word. */
function packFns(dtype: PackedDtype): string {
  return dtype === 'bfloat16'
    ? `
      fn half(x : f32) -> u32 {
        let b = bitcast<u32>(x);
        if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7fc0u; }
        return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
      }
      fn packPair(lo : f32, hi : f32) -> i32 { return bitcast<i32>(half(lo) | (half(hi) << 16u)); }`
    : `
      fn packPair(lo : f32, hi : f32) -> i32 { return bitcast<i32>(pack2x16float(vec2<f32>(lo, hi))); }`;
}

/**
 * A float32 [rows, cols] matrix packed to int32 [rows, cols/2]: bfloat16 rounded to nearest, ties
 * to even (NaN stays NaN), float16 by WGSL's `pack2x16float`.
 */
export function packProgram(rows: number, cols: number, dtype: PackedDtype): GpuProgram {
  return elementwise(
    `poad_pack_${dtype}`,
    ['x'],
    [rows, cols / 2],
    'result[index] = packPair(x[2 * index], x[2 * index + 1]);',
    undefined,
    packFns(dtype),
  );
}

/**
 * A packed [rows, cols] matrix of normal draws N(mean, std²), made on the device: word i holds
 * the Box–Muller pair of two uniforms hashed from (seed, i) (the PCG output hash), so no random
 * number is made on the host and the result depends only on the seed and the shape. Uniforms
 * `seed` (u32 bits as i32), `mean`, `sigma`.
 */
export function randomPackedProgram(rows: number, cols: number, dtype: PackedDtype): GpuProgram {
  return elementwise(
    `poad_random_packed_${dtype}`,
    [],
    [rows, cols / 2],
    `let s = pcg(bitcast<u32>(uniforms.seed));
          let h1 = pcg(s ^ pcg(2u * u32(index)));
          let h2 = pcg(s ^ pcg(2u * u32(index) + 1u));
          // u1 in (0, 1], u2 in [0, 1): 24 random bits each.
          let u1 = (f32(h1 >> 8u) + 1.0) / 16777216.0;
          let u2 = f32(h2 >> 8u) / 16777216.0;
          let r = sqrt(-2.0 * log(u1)) * uniforms.sigma;
          let a = 6.283185307179586 * u2;
          result[index] = packPair(uniforms.mean + r * cos(a), uniforms.mean + r * sin(a));`,
    'seed : i32, mean : f32, sigma : f32,',
    `${packFns(dtype)}
      fn pcg(v : u32) -> u32 {
        let state = v * 747796405u + 2891336453u;
        let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
        return (word >> 22u) ^ word;
      }`,
  );
}
