import { type GpuProgram, perRow, workgroupReduce } from './programs.js';

/*
 * Programs of token-by-token generation on the device: drawing the next token of each row from
 * its logits (so that only the chosen ids, not the logits, ever come back to the host), and
 * attention of one new query per row over a key/value cache preallocated for the whole
 * generation and written in place (no concatenation per token).
 */

/** Most kept tokens the sampler sorts in workgroup memory (8 KiB) and walks one by one. */
const SORTED = 1024;

/**
 * WGSL helpers of the sampler. `sortKey` maps a float to a u32 that orders as the floats do
 * (−0 and +0 are one key, as they compare equal); `isKept` says whether logit c (with key k) is
 * among the top k: keys above the k-th's, or equal to it at an index up to the k-th's.
 */
const SAMPLER_HELPERS = `
      const SORTED : i32 = ${SORTED};
      var<workgroup> sortedKey : array<u32, ${SORTED}>;
      var<workgroup> sortedIdx : array<i32, ${SORTED}>;
      var<workgroup> fill : atomic<u32>;
      var<workgroup> hist : array<atomic<u32>, 256>;
      var<workgroup> chosen : u32;
      var<workgroup> chosenNeed : u32;
      fn ranksBefore(i : i32, j : i32) -> bool {
        return sortedKey[i] > sortedKey[j] || (sortedKey[i] == sortedKey[j] && sortedIdx[i] < sortedIdx[j]);
      }
      fn sortKey(x : f32) -> u32 {
        if (x == 0.0) { return 0x80000000u; }
        let b = bitcast<u32>(x);
        if ((b & 0x80000000u) != 0u) { return ~b; }
        return b | 0x80000000u;
      }
      fn isKept(c : i32, k : u32, kKey : u32, kIdx : i32) -> bool {
        return k > kKey || (k == kKey && c <= kIdx);
      }`;

/** Base-256 digits of the indices 0 .. cols − 1. */
function indexDigits(cols: number): number {
  let d = 1;
  while (256 ** d < cols) d++;
  return d;
}

/**
 * WGSL of a radix selection over 8-bit digits, most significant first, each digit one pass over
 * the row counting into a 256-bin histogram in workgroup memory (integer counts: the same in
 * every run) and a scan of the bins by one invocation. It finds the `need`-th value of `value`
 * (a u32 of a logit: its key `k`, or its index `u32(c)`) among the logits where `cond` holds,
 * largest first (`descending`) or smallest first; `out` gets the value and `outNeed` how many
 * logits of that value complete the count. Every invocation runs the same rounds and barriers.
 */
function radixSelect(o: {
  value: string;
  cond: string;
  need: string;
  digits: number;
  descending: boolean;
  out: string;
  outNeed: string;
}): string {
  const scan = o.descending
    ? 'for (var b = 255; b >= 0; b = b - 1)'
    : 'for (var b = 0; b < 256; b = b + 1)';
  return `
            var ${o.out} = 0u;
            var ${o.outNeed} = ${o.need};
            for (var d = 0; d < ${o.digits}; d = d + 1) {
              let shift = u32(8 * (${o.digits} - 1 - d));
              for (var i = lane; i < 256; i = i + WG) { atomicStore(&hist[i], 0u); }
              workgroupBarrier();
              for (var c = lane; c < cols; c = c + WG) {
                let k = sortKey(z[base + c]);
                let v = ${o.value};
                // The digits above this one are those chosen so far.
                if ((${o.cond}) && (d == 0 || (v >> (shift + 8u)) == (${o.out} >> (shift + 8u)))) {
                  atomicAdd(&hist[(v >> shift) & 255u], 1u);
                }
              }
              workgroupBarrier();
              if (lane == 0) {
                var cum = 0u;
                var bin = 0u;
                ${scan} {
                  let h = atomicLoad(&hist[b]);
                  if (cum + h >= ${o.outNeed}) {
                    bin = u32(b);
                    break;
                  }
                  cum = cum + h;
                }
                chosen = ${o.out} | (bin << shift);
                chosenNeed = ${o.outNeed} - cum;
              }
              workgroupBarrier();
              ${o.out} = chosen;
              ${o.outNeed} = chosenNeed;
              workgroupBarrier();
            }`;
}

/**
 * One token per row of logits z [rows, vocab], drawn as the host sampler of `@poad/lora-model`
 * (`sampleToken`) draws it, with the row's uniform u = k / 2³² given as its 32 bits k (int32
 * [rows], the bits of the unsigned k): uniforms `temperature` (0: the first index of the largest
 * logit, no u used) and `topK` (0: every token).
 *
 * The host ranks tokens by logit, larger first, ties by smaller index, keeps the first k, and
 * walks the kept tokens in that order subtracting each one's p = exp(z/T − max/T) from u · total
 * until the remainder goes below zero: it draws the first token whose cumulative mass exceeds
 * u · total. Here the same token is found in float32 with the sums taken where they are
 * accurate: for u < ½ the mass before a token is compared with u · total, for u ≥ ½ the mass
 * after it with (1 − u) · total, 1 − u computed exactly from k (a mass summed from the small end
 * has the error of its own size, not of the total's). So the draw differs from the host's only
 * when u falls within float32 rounding of a boundary between two tokens. In passes over the row
 * that every invocation of the workgroup runs alike (same rounds, same barriers):
 * - the k-th token by radix selection ({@link radixSelect}): its key in 4 passes, then among the
 *   logits of that key the index where the count reaches k (a pass per 8 bits of the index);
 * - at most {@link SORTED} kept tokens (top-k, or a small vocabulary): gathered into workgroup
 *   memory, sorted by rank (bitonic) and walked by one invocation with compensated sums, from
 *   the front (u < ½) or from the back;
 * - more: bisection over the keys (32 passes, each a workgroup sum of float32 masses, whose
 *   order is fixed) for the tie group (equal logits, equal p) the draw falls in, the largest key
 *   whose mass at or above it exceeds u · total (or whose mass below it stays under
 *   (1 − u) · total), then the member within the group from the mass before (after) it, found
 *   by radix selection over the indices.
 * Writes int32 [3·rows]: the ids, then bitcast log π(id) under the full vocabulary at temperature
 * 1, then bitcast log-probability of the id under the kept, tempered distribution (0 for greedy).
 */
export function sampleTokensProgram(rows: number, cols: number): GpuProgram {
  const digits = indexDigits(cols);
  // One pass over the row: `init` per lane, `each` per logit x (key k, index c), then combined
  // over the workgroup with `reduce` into `name`.
  const pass = (name: string, init: string, each: string, reduce: 'reduceSum' | 'reduceMax') => `
          var ${name}Part = ${init};
          for (var c = lane; c < cols; c = c + WG) {
            let x = z[base + c];
            let k = sortKey(x);
            ${each}
          }
          let ${name} = ${reduce}(${name}Part);`;
  return perRow(
    `poad_sample_tokens_${digits}`,
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
          let bits = bitcast<u32>(u[row]);
          let front = bits < 0x80000000u;
          let uFront = f32(bits) * 2.3283064365386963e-10;
          var uBack = 1.0;
          if (bits != 0u) { uBack = f32(0u - bits) * 2.3283064365386963e-10; }
          let K = uniforms.topK;
          // How many tokens are kept: k, or all (no k, or k beyond the vocabulary).
          var kept = cols;
          if (K > 0 && K < cols) { kept = K; }
          var kKey = 0u;
          var kIdx = cols;
          if (kept < cols) {
            ${radixSelect({ value: 'k', cond: 'true', need: 'u32(kept)', digits: 4, descending: true, out: 'kthKey', outNeed: 'ties' })}
            kKey = kthKey;
            ${radixSelect({ value: 'u32(c)', cond: 'k == kKey', need: 'ties', digits, descending: false, out: 'kthIdx', outNeed: 'unused' })}
            kIdx = i32(kthIdx);
          }
          let top = zmax / T;
          if (kept <= SORTED) {
            // Few kept tokens: gathered into workgroup memory, sorted into the host's rank order
            // (bitonic), and walked by one invocation.
            if (lane == 0) { atomicStore(&fill, 0u); }
            workgroupBarrier();
            for (var c = lane; c < cols; c = c + WG) {
              let k = sortKey(z[base + c]);
              if (isKept(c, k, kKey, kIdx)) {
                let at = atomicAdd(&fill, 1u);
                if (at < u32(SORTED)) {
                  sortedKey[at] = k;
                  sortedIdx[at] = c;
                }
              }
            }
            var size = 1;
            while (size < kept) { size = size * 2; }
            for (var i = kept + lane; i < size; i = i + WG) {
              sortedKey[i] = 0u;
              sortedIdx[i] = 0x7fffffff;
            }
            workgroupBarrier();
            for (var span = 2; span <= size; span = span * 2) {
              for (var stride = span / 2; stride > 0; stride = stride / 2) {
                for (var t = lane; t < size / 2; t = t + WG) {
                  let i = 2 * t - (t & (stride - 1));
                  let j = i + stride;
                  let jFirst = ranksBefore(j, i);
                  if (((i & span) == 0 && jFirst) || ((i & span) != 0 && !jFirst)) {
                    let k = sortedKey[i];
                    let c = sortedIdx[i];
                    sortedKey[i] = sortedKey[j];
                    sortedIdx[i] = sortedIdx[j];
                    sortedKey[j] = k;
                    sortedIdx[j] = c;
                  }
                }
                workgroupBarrier();
              }
            }
            if (lane == 0) {
              // Compensated (Kahan) sums: the total, then the mass before or after each token.
              var total = 0.0;
              var err = 0.0;
              for (var j = 0; j < kept; j = j + 1) {
                let y = exp(z[base + sortedIdx[j]] / T - top) - err;
                let t2 = total + y;
                err = (t2 - total) - y;
                total = t2;
              }
              var pick = kept - 1;
              var acc = 0.0;
              err = 0.0;
              if (front) {
                // The first token whose mass up to and including it exceeds u · total.
                let goal = uFront * total;
                for (var j = 0; j < kept; j = j + 1) {
                  let y = exp(z[base + sortedIdx[j]] / T - top) - err;
                  let t2 = acc + y;
                  err = (t2 - acc) - y;
                  acc = t2;
                  if (acc > goal) {
                    pick = j;
                    break;
                  }
                }
              } else {
                // The first token whose mass after it is below (1 − u) · total, from the back.
                let goal = uBack * total;
                pick = kept - 1;
                for (var j = kept - 1; j > 0; j = j - 1) {
                  let y = exp(z[base + sortedIdx[j]] / T - top) - err;
                  let t2 = acc + y;
                  if (t2 >= goal) { break; }
                  err = (t2 - acc) - y;
                  acc = t2;
                  pick = j - 1;
                }
              }
              id = sortedIdx[pick];
              slp = log(exp(z[base + id] / T - top) / total);
            }
          } else {
            // Many kept tokens: the tie group by bisection over the keys, with
            // mass(κ) = Σ p of kept tokens with key ≥ κ (front) or key < κ (back).
            ${pass('total', '0.0', 'if (isKept(c, k, kKey, kIdx)) { totalPart = totalPart + exp(x / T - top); }', 'reduceSum')}
            let goal = select(uBack * total, uFront * total, front);
            var lo = 0u;
            var hi = 0xffffffffu;
            for (var it = 0; it < 32; it = it + 1) {
              let mid = lo + (hi - lo) / 2u + 1u;
              ${pass('mass', '0.0', 'if ((k >= mid) == front && isKept(c, k, kKey, kIdx)) { massPart = massPart + exp(x / T - top); }', 'reduceSum')}
              let inside = (front && mass > goal) || (!front && mass < goal);
              if (lo < hi) { if (inside) { lo = mid; } else { hi = mid - 1u; } }
            }
            // The group (key lo): its size, p, and the mass on the walk's side of it.
            ${pass('members', '0.0', 'if (k == lo && isKept(c, k, kKey, kIdx)) { membersPart = membersPart + 1.0; }', 'reduceSum')}
            ${pass('p', '0.0', 'if (k == lo && isKept(c, k, kKey, kIdx)) { pPart = exp(x / T - top); }', 'reduceMax')}
            ${pass('side', '0.0', 'if (((k > lo) == front) && k != lo && isKept(c, k, kKey, kIdx)) { sidePart = sidePart + exp(x / T - top); }', 'reduceSum')}
            // Member j (in index order) is drawn when the mass before it plus (j + 1)·p exceeds
            // u · total; from the back, when the mass after it plus (members − 1 − j)·p is below
            // (1 − u) · total.
            var skip = clamp(floor((goal - side) / p), 0.0, members - 1.0);
            if (!front) { skip = clamp(members - ceil((goal - side) / p), 0.0, members - 1.0); }
            ${radixSelect({ value: 'u32(c)', cond: 'k == lo && isKept(c, k, kKey, kIdx)', need: 'u32(skip) + 1u', digits, descending: false, out: 'member', outNeed: 'unusedToo' })}
            id = i32(member);
            slp = (z[base + id] / T - top) - log(total);
          }
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
  heads: number;
  kvHeads: number;
  hd: number;
}

/** Keys per tile of {@link cacheAttentionProgram}: one per invocation of its workgroup. */
const CACHE_TILE = 64;

/**
 * Attention of one new query per row over a preallocated cache: q [rows, heads·hd] (rotated),
 * k and v [slots, rows, kvHeads·hd], slot-major: the first `prompt` slots hold the right-padded
 * prompts, slot prompt + t every row's token t after its prompt. Row r reads its lens[r] prompt
 * slots (lens int32 [rows]) and slots prompt .. prompt + extra − 1 (uniforms `prompt`, `extra`);
 * its padding and later slots are never read. Out [rows, heads·hd]. One workgroup per (row,
 * head) walks the keys in tiles of
 * {@link CACHE_TILE}, one key per invocation (its score), with an online softmax over the tiles
 * (workgroup max and sum), each invocation accumulating its own columns of the output; forward
 * only (generation).
 */
export function cacheAttentionProgram(d: CacheAttentionDims): GpuProgram {
  const own = Math.ceil(d.hd / CACHE_TILE);
  return {
    variableNames: ['q', 'kc', 'vc', 'lens'],
    outputShape: [d.rows, d.heads * d.hd],
    shaderKey: `poad_cache_attn_${d.hd}`,
    dispatchLayout: { x: [0, 1] },
    dispatch: [d.rows * d.heads, 1, 1],
    workgroupSize: [CACHE_TILE, 1, 1],
    uniforms: 'rows : i32, heads : i32, group : i32, prompt : i32, extra : i32, scale : f32,',
    getUserCode: () => `
      const HD : i32 = ${d.hd};
      const WG : i32 = ${CACHE_TILE};
      const OWN : i32 = ${own};
      var<workgroup> partial : array<f32, ${CACHE_TILE}>;
      var<workgroup> total : f32;
      var<workgroup> probs : array<f32, ${CACHE_TILE}>;
      var<workgroup> qs : array<f32, ${d.hd}>;
      ${workgroupReduce('reduceSum', (a, b) => `${a} + ${b}`)}
      ${workgroupReduce('reduceMax', (a, b) => `max(${a}, ${b})`)}
      fn main(index : i32) {
        let lane = i32(localId.x);
        let wgIndex = index / WG;
        let h = wgIndex % uniforms.heads;
        let r = wgIndex / uniforms.heads;
        let kvh = h / uniforms.group;
        let KW = (uniforms.heads / uniforms.group) * HD;
        let own = lens[r];
        let end = uniforms.prompt + uniforms.extra;
        let qAt = r * uniforms.heads * HD + h * HD;
        for (var c = lane; c < HD; c = c + WG) { qs[c] = q[qAt + c] * uniforms.scale; }
        workgroupBarrier();
        var acc : array<f32, ${own}>;
        for (var o = 0; o < OWN; o = o + 1) { acc[o] = 0.0; }
        var m = -3.402823e+38;
        var l = 0.0;
        for (var t0 = 0; t0 < end; t0 = t0 + WG) {
          let j = t0 + lane;
          let real = j < own || (j >= uniforms.prompt && j < end);
          var s = -3.402823e+38;
          if (real) {
            let at = (j * uniforms.rows + r) * KW + kvh * HD;
            var dot = 0.0;
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qs[c] * kc[at + c]; }
            s = dot;
          }
          let mNew = max(m, reduceMax(s));
          var p = 0.0;
          if (real) { p = exp(s - mNew); }
          probs[lane] = p;
          let tileSum = reduceSum(p);
          // A tile of the row's padding only leaves everything as it is.
          if (tileSum > 0.0) {
            let corr = exp(m - mNew);
            l = l * corr + tileSum;
            let n = min(WG, end - t0);
            for (var o = 0; o < OWN; o = o + 1) {
              let c = lane + o * WG;
              if (c < HD) {
                var a = acc[o] * corr;
                for (var jj = 0; jj < n; jj = jj + 1) {
                  let pj = probs[jj];
                  if (pj > 0.0) {
                    a = a + pj * vc[((t0 + jj) * uniforms.rows + r) * KW + kvh * HD + c];
                  }
                }
                acc[o] = a;
              }
            }
            m = mNew;
          }
          workgroupBarrier();
        }
        for (var o = 0; o < OWN; o = o + 1) {
          let c = lane + o * WG;
          if (c < HD) { result[qAt + c] = acc[o] / l; }
        }
      }`,
  };
}
