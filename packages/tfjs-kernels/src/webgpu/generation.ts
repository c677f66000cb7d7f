import { type GpuProgram, perRow } from './programs.js';

/*
 * Programs of token-by-token generation on the device: drawing the next token of each row from
 * its logits (so that only the chosen ids, not the logits, ever come back to the host), and
 * attention of one new query per row over a key/value cache preallocated for the whole
 * generation and written in place (no concatenation per token).
 */

/**
 * WGSL helpers of the sampler. `sortKey` maps a float to a u32 that orders as the floats do
 * (−0 and +0 are one key, as they compare equal); `isKept` says whether logit c (with key k) is
 * among the top k: keys above the k-th's, or equal to it at an index up to the k-th's.
 */
const SAMPLER_HELPERS = `
      fn sortKey(x : f32) -> u32 {
        if (x == 0.0) { return 0x80000000u; }
        let b = bitcast<u32>(x);
        if ((b & 0x80000000u) != 0u) { return ~b; }
        return b | 0x80000000u;
      }
      fn isKept(c : i32, k : u32, kKey : u32, kIdx : i32) -> bool {
        return k > kKey || (k == kKey && c <= kIdx);
      }`;

/** Rounds of a bisection over the indices 0 .. cols − 1. */
function indexRounds(cols: number): number {
  let r = 1;
  while (1 << (r - 1) < cols) r++;
  return r;
}

/**
 * One token per row of logits z [rows, vocab], drawn as the host sampler of `@poad/lora-model`
 * (`sampleToken`) draws it, with the row's uniform u [rows] in [0, 1): uniforms `temperature`
 * (0: the first index of the largest logit, no u used) and `topK` (0: every token).
 *
 * The host ranks tokens by logit, larger first, ties by smaller index, keeps the first k, and
 * walks the kept tokens in that order subtracting each one's exp(z/T − max/T) from u · total
 * until the remainder goes below zero (the last kept token when it never does). Here each
 * boundary of that walk is found by bisection, each round one pass over the row and one
 * workgroup sum (the rounds and barriers are the same in every invocation):
 * - the k-th token: the largest key with at least k logits at or above it (32 rounds over the
 *   keys), then among the logits of that key the index where the count reaches k (index rounds);
 * - the drawn token: the largest key κ whose kept mass F(κ) (kept tokens with key ≥ κ) exceeds
 *   u · total, then within its tie group (equal logits, equal mass p) the member
 *   floor((u · total − mass before the group) / p) in index order.
 * Writes int32 [3·rows]: the ids, then bitcast log π(id) under the full vocabulary at temperature
 * 1, then bitcast log-probability of the id under the kept, tempered distribution (0 for greedy).
 */
export function sampleTokensProgram(rows: number, cols: number): GpuProgram {
  const rounds = indexRounds(cols);
  // One pass over the row: `init` per lane, `each` per logit x (key k, index c), then `out`
  // combined over the workgroup with `reduce`.
  const pass = (name: string, init: string, each: string, reduce: 'reduceSum' | 'reduceMax') => `
          var ${name}Part = ${init};
          for (var c = lane; c < cols; c = c + WG) {
            let x = z[base + c];
            let k = sortKey(x);
            ${each}
          }
          let ${name} = ${reduce}(${name}Part);`;
  return perRow(
    `poad_sample_tokens_${rounds}`,
    ['z', 'u'],
    [3 * rows],
    rows,
    cols,
    `
        let base = row * cols;
        let T = uniforms.temperature;
        var m = -3.402823e+38;
        for (var c = lane; c < cols; c = c + WG) { m = max(m, z[base + c]); }
        let zmax = reduceMax(m);
        var first = f32(cols);
        for (var c = lane; c < cols; c = c + WG) {
          if (z[base + c] == zmax) { first = min(first, f32(c)); }
        }
        var id = i32(-reduceMax(-first));
        var se = 0.0;
        for (var c = lane; c < cols; c = c + WG) { se = se + exp(z[base + c] - zmax); }
        let logSum = log(reduceSum(se));
        var slp = 0.0;
        if (T > 0.0) {
          let K = uniforms.topK;
          var kKey = 0u;
          var kIdx = cols;
          if (K > 0 && K < cols) {
            var lo = 0u;
            var hi = 0xffffffffu;
            for (var it = 0; it < 32; it = it + 1) {
              let mid = lo + (hi - lo) / 2u + 1u;
              ${pass('atLeast', '0.0', 'if (k >= mid) { atLeastPart = atLeastPart + 1.0; }', 'reduceSum')}
              if (lo < hi) { if (atLeast >= f32(K)) { lo = mid; } else { hi = mid - 1u; } }
            }
            kKey = lo;
            ${pass('above', '0.0', 'if (k > kKey) { abovePart = abovePart + 1.0; }', 'reduceSum')}
            let need = f32(K) - above;
            var a = 0;
            var b = cols - 1;
            for (var it = 0; it < ${rounds}; it = it + 1) {
              let mid = (a + b) / 2;
              ${pass('upTo', '0.0', 'if (c <= mid && k == kKey) { upToPart = upToPart + 1.0; }', 'reduceSum')}
              if (a < b) { if (upTo >= need) { b = mid; } else { a = mid + 1; } }
            }
            kIdx = a;
          }
          let top = zmax / T;
          ${pass('total', '0.0', 'if (isKept(c, k, kKey, kIdx)) { totalPart = totalPart + exp(x / T - top); }', 'reduceSum')}
          let goal = u[row] * total;
          var lo = 0u;
          var hi = 0xffffffffu;
          for (var it = 0; it < 32; it = it + 1) {
            let mid = lo + (hi - lo) / 2u + 1u;
            ${pass('mass', '0.0', 'if (k >= mid && isKept(c, k, kKey, kIdx)) { massPart = massPart + exp(x / T - top); }', 'reduceSum')}
            if (lo < hi) { if (mass > goal) { lo = mid; } else { hi = mid - 1u; } }
          }
          // The group the walk stops in, and the member to skip to; or, when rounding left no
          // remainder below zero (u · total ≥ total), the last kept token as on the host.
          ${pass('before', '0.0', 'if (k > lo && isKept(c, k, kKey, kIdx)) { beforePart = beforePart + exp(x / T - top); }', 'reduceSum')}
          ${pass('members', '0.0', 'if (k == lo && isKept(c, k, kKey, kIdx)) { membersPart = membersPart + 1.0; }', 'reduceSum')}
          ${pass('p', '0.0', 'if (k == lo && isKept(c, k, kKey, kIdx)) { pPart = exp(x / T - top); }', 'reduceMax')}
          ${pass('low', '-3.402823e+38', 'if (isKept(c, k, kKey, kIdx)) { lowPart = max(lowPart, -x); }', 'reduceMax')}
          let lastKey = sortKey(-low);
          ${pass('lastMembers', '0.0', 'if (k == lastKey && isKept(c, k, kKey, kIdx)) { lastMembersPart = lastMembersPart + 1.0; }', 'reduceSum')}
          var vKey = lo;
          var skip = lastMembers - 1.0;
          if (total > goal) {
            skip = clamp(floor((goal - before) / p), 0.0, members - 1.0);
          } else {
            vKey = lastKey;
          }
          var a = 0;
          var b = cols - 1;
          for (var it = 0; it < ${rounds}; it = it + 1) {
            let mid = (a + b) / 2;
            ${pass('upTo', '0.0', 'if (c <= mid && k == vKey && isKept(c, k, kKey, kIdx)) { upToPart = upToPart + 1.0; }', 'reduceSum')}
            if (a < b) { if (upTo >= skip + 1.0) { b = mid; } else { a = mid + 1; } }
          }
          id = a;
          slp = (z[base + id] / T - top) - log(total);
        }
        if (live && lane == 0) {
          result[row] = id;
          result[uniforms.rows + row] = bitcast<i32>(z[base + id] - zmax - logSum);
          result[2 * uniforms.rows + row] = bitcast<i32>(slp);
        }`,
    'temperature : f32, topK : i32,',
    SAMPLER_HELPERS,
  );
}

/** Sizes of a cached attention call (see {@link cacheAttentionProgram}). */
export interface CacheAttentionDims {
  rows: number;
  slots: number;
  heads: number;
  kvHeads: number;
  hd: number;
}

/**
 * Attention of one new query per row over a preallocated cache: q [rows, heads·hd] (rotated),
 * k and v [rows, slots, kvHeads·hd] (slot s of row r holds the key of position s), lens int32
 * [rows]; row r reads slots 0 .. lens[r] + extra − 1 (uniform `extra`), the rest of its slots
 * are never read. Out [rows, heads·hd]. One invocation per (row, head), an online softmax over the
 * row's keys in registers; forward only (generation).
 */
export function cacheAttentionProgram(d: CacheAttentionDims): GpuProgram {
  const n = d.rows * d.heads;
  return {
    variableNames: ['q', 'kc', 'vc', 'lens'],
    outputShape: [d.rows, d.heads * d.hd],
    shaderKey: `poad_cache_attn_${d.hd}`,
    dispatchLayout: { x: [0, 1] },
    dispatch: [Math.ceil(n / 64), 1, 1],
    workgroupSize: [64, 1, 1],
    uniforms: 'slots : i32, heads : i32, group : i32, extra : i32, scale : f32,',
    getUserCode: () => `
      const HD : i32 = ${d.hd};
      fn main(index : i32) {
        if (index >= uniforms.outShape[0] * uniforms.heads) { return; }
        let h = index % uniforms.heads;
        let r = index / uniforms.heads;
        let kvh = h / uniforms.group;
        let KW = (uniforms.heads / uniforms.group) * HD;
        let keys = min(lens[r] + uniforms.extra, uniforms.slots);
        var qr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        let qAt = r * uniforms.heads * HD + h * HD;
        for (var c = 0; c < HD; c = c + 1) { qr[c] = q[qAt + c] * uniforms.scale; acc[c] = 0.0; }
        var m = -3.402823e+38;
        var l = 0.0;
        for (var j = 0; j < keys; j = j + 1) {
          let at = (r * uniforms.slots + j) * KW + kvh * HD;
          var dot = 0.0;
          for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * kc[at + c]; }
          let mNew = max(m, dot);
          let corr = exp(m - mNew);
          let p = exp(dot - mNew);
          l = l * corr + p;
          for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] * corr + p * vc[at + c]; }
          m = mNew;
        }
        for (var c = 0; c < HD; c = c + 1) { result[qAt + c] = acc[c] / l; }
      }`,
  };
}
