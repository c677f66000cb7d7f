import type { GpuProgram } from './programs.js';

/*
 * Causal grouped-query attention as flash-style WGSL programs: no [seq, seq] buffer per head is
 * ever written. The forward pass walks the keys in tiles with an online softmax (running max and
 * sum per query row); the backward pass recomputes the probabilities from a per-row log-sum-exp.
 *
 * Layout (that of the decoder and of `FusedOps.attention`): q is [batch·seq, heads·hd], k and v
 * are [batch·seq, kvHeads·hd] (row b·seq + t, head h in columns h·hd .. h·hd + hd − 1), the mask
 * is [batch, seq, seq] (additive). Query head h reads kv head floor(h / group), group =
 * heads / kvHeads. Scores are scale · q·k + mask. Causal: a query never reads keys after its own
 * position, so those tiles are skipped (the decoder's mask is −1e9 there anyway).
 *
 * Programs (one workgroup of WG invocations per (batch, head, block of WG rows); each invocation
 * owns one row and keeps its hd-vectors in registers; tiles of the other side are shared through
 * workgroup memory, at most 16 KiB, the WebGPU default limit). No input may be called `out`: the
 * backend declares a `<name>Shape` uniform per input beside the output's `outShape`.
 * - forward: out;
 * - stats: per query row the log-sum-exp L and D = dO·out (the backward's two row constants);
 * - dq: Σ_j dS_ij k_j · scale with dS = P·(dO·v − D), P = exp(s − L);
 * - dk (per key row, summed over the group's query heads): Σ_i dS_ij q_i · scale;
 * - dv: Σ_i P_ij dO_i.
 * So one forward program per layer and four backward, against about 9 and 13 for the TF.js
 * composition.
 */

/** Sizes of one attention call. */
export interface AttentionDims {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  hd: number;
  scale: number;
}

/** Floats of workgroup memory a program may use (16 KiB, WebGPU's default limit). */
const SHARED_FLOATS = 4096;

/** Rows per workgroup: a power of two, 16 to 64, about the sequence length. */
function rowsPerGroup(seq: number): number {
  let wg = 16;
  while (wg < 64 && wg < seq) wg *= 2;
  return wg;
}

/** Rows of the other side per shared tile: `perRow` floats each, within the shared budget. */
function tileRows(perRow: number, extra: number): number {
  let t = 1;
  while (t < 32 && 2 * t * (perRow + extra) <= SHARED_FLOATS) t *= 2;
  return t;
}

/** Uniform values of every attention program, in the order of {@link UNIFORMS}. */
export function attentionUniforms(d: AttentionDims): Array<{ type: string; data: number[] }> {
  return [
    { type: 'int32', data: [d.seq] },
    { type: 'int32', data: [d.heads] },
    { type: 'int32', data: [d.heads / d.kvHeads] },
    { type: 'float32', data: [d.scale] },
  ];
}

const UNIFORMS = 'seq : i32, heads : i32, group : i32, scale : f32,';

/**
 * Common head of the programs: the workgroup's (b, h, first row) and this invocation's row, with
 * `S` the sequence, `QW`/`KW` the widths of q and k rows, `kvh` the kv head.
 */
function header(wg: number, kvSide: boolean): string {
  const blocks = `((uniforms.seq + ${wg} - 1) / ${wg})`;
  // The key-side programs run one workgroup per (b, kv head, block); query-side per (b, head).
  const headsHere = kvSide ? 'uniforms.heads / uniforms.group' : 'uniforms.heads';
  return `
        let S = uniforms.seq;
        let QW = uniforms.heads * HD;
        let KW = (uniforms.heads / uniforms.group) * HD;
        let lane = i32(localId.x);
        let wgIndex = index / ${wg};
        let blk = wgIndex % ${blocks};
        let bh = wgIndex / ${blocks};
        let head = bh % (${headsHere});
        let b = bh / (${headsHere});
        let first = blk * ${wg};
        let row = first + lane;
        let r = min(row, S - 1);
        let last = min(first + ${wg}, S) - 1;`;
}

function program(
  key: string,
  variableNames: string[],
  outputShape: number[],
  d: AttentionDims,
  wg: number,
  kvSide: boolean,
  declarations: string,
  body: string,
): GpuProgram {
  const headsHere = kvSide ? d.kvHeads : d.heads;
  const groups = d.batch * headsHere * Math.ceil(d.seq / wg);
  return {
    variableNames,
    outputShape,
    shaderKey: `${key}_${d.hd}_${wg}`,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: [groups, 1, 1],
    workgroupSize: [wg, 1, 1],
    uniforms: UNIFORMS,
    getUserCode: () => `
      const HD : i32 = ${d.hd};
      ${declarations}
      fn main(index : i32) {
        ${header(wg, kvSide)}
        ${body}
      }`,
  };
}

/** Workgroup tiles of BK key rows (and value rows with `withV`). */
function keyTileDecls(bk: number, hd: number, withV: boolean): string {
  return `const BK : i32 = ${bk};
      var<workgroup> kt : array<f32, ${bk * hd}>;${
        withV
          ? `
      var<workgroup> vt : array<f32, ${bk * hd}>;`
          : ''
      }`;
}

/**
 * WGSL of a loop over the key tiles a query row may see: the workgroup loads each tile of keys
 * (and values) into `kt` (`vt`), then `body` runs with `j0` (the tile's first key) and `n` (how
 * many of its keys this row sees, ≤ 0 past the row: causal). The loop bounds are uniform, so the
 * barriers are reached by every invocation.
 */
function overKeyTiles(wg: number, withV: boolean, body: string): string {
  return `
        for (var j0 = 0; j0 < S; j0 = j0 + BK) {
          let live = j0 <= last;
          for (var t = lane; live && t < BK * HD; t = t + ${wg}) {
            let j = min(j0 + t / HD, S - 1);
            let at = (b * S + j) * KW + kvh * HD + t % HD;
            kt[t] = k[at];${
              withV
                ? `
            vt[t] = v[at];`
                : ''
            }
          }
          workgroupBarrier();
          let n = min(BK, r + 1 - j0);
          ${body}
          workgroupBarrier();
        }`;
}

/**
 * A query-side program: one invocation per query row of each (batch, head), over shared tiles of
 * keys (and values with `withV`). `body` gets the WGSL loop over the tiles a row sees
 * ({@link overKeyTiles}) and the tile's row count.
 */
function queryRowProgram(
  key: string,
  variableNames: string[],
  outputShape: number[],
  d: AttentionDims,
  withV: boolean,
  body: (overTiles: (tileBody: string) => string, bk: number) => string,
): GpuProgram {
  const wg = rowsPerGroup(d.seq);
  const bk = tileRows(d.hd, 0);
  const overTiles = (tileBody: string) => overKeyTiles(wg, withV, tileBody);
  const declarations = keyTileDecls(bk, d.hd, withV);
  return program(key, variableNames, outputShape, d, wg, false, declarations, body(overTiles, bk));
}

/** WGSL: column c of this invocation's row of a [batch·seq, heads·hd] result is `value`. */
function storeQueryRow(value: string): string {
  return `if (row < S) {
          for (var c = 0; c < HD; c = c + 1) {
            result[(b * S + row) * QW + head * HD + c] = ${value};
          }
        }`;
}

/** Forward: out [batch·seq, heads·hd]. */
export function attentionForwardProgram(d: AttentionDims): GpuProgram {
  return queryRowProgram(
    'poad_attn_fwd',
    ['q', 'k', 'v', 'mask'],
    [d.batch * d.seq, d.heads * d.hd],
    d,
    true,
    (overTiles, bk) => `
        let kvh = head / uniforms.group;
        var qr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) {
          qr[c] = q[(b * S + r) * QW + head * HD + c] * uniforms.scale;
          acc[c] = 0.0;
        }
        var m = -3.402823e+38;
        var l = 0.0;
        var s : array<f32, ${bk}>;
        ${overTiles(
          `var tmax = -3.402823e+38;
          for (var jj = 0; jj < n; jj = jj + 1) {
            var dot = 0.0;
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * kt[jj * HD + c]; }
            s[jj] = dot + mask[(b * S + r) * S + j0 + jj];
            tmax = max(tmax, s[jj]);
          }
          if (n > 0) {
            let mNew = max(m, tmax);
            let corr = exp(m - mNew);
            l = l * corr;
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] * corr; }
            for (var jj = 0; jj < n; jj = jj + 1) {
              let p = exp(s[jj] - mNew);
              l = l + p;
              for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] + p * vt[jj * HD + c]; }
            }
            m = mNew;
          }`,
        )}
        ${storeQueryRow('acc[c] / l')}`,
  );
}

/**
 * The backward's row constants: result [batch, heads, seq, 2] holds L = log Σ_j exp(s_ij) and
 * D = dO_i · out_i for every query row.
 */
export function attentionStatsProgram(d: AttentionDims): GpuProgram {
  return queryRowProgram(
    'poad_attn_stats',
    ['q', 'k', 'mask', 'o', 'dy'],
    [d.batch, d.heads, d.seq, 2],
    d,
    false,
    (overTiles) => `
        let kvh = head / uniforms.group;
        var qr : array<f32, ${d.hd}>;
        var dd = 0.0;
        for (var c = 0; c < HD; c = c + 1) {
          let at = (b * S + r) * QW + head * HD + c;
          qr[c] = q[at] * uniforms.scale;
          dd = dd + dy[at] * o[at];
        }
        var m = -3.402823e+38;
        var l = 0.0;
        ${overTiles(
          `for (var jj = 0; jj < n; jj = jj + 1) {
            var dot = 0.0;
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * kt[jj * HD + c]; }
            let sv = dot + mask[(b * S + r) * S + j0 + jj];
            let mNew = max(m, sv);
            l = l * exp(m - mNew) + exp(sv - mNew);
            m = mNew;
          }`,
        )}
        if (row < S) {
          let at = ((b * uniforms.heads + head) * S + row) * 2;
          result[at] = m + log(l);
          result[at + 1] = dd;
        }`,
  );
}

/** dq [batch·seq, heads·hd]. */
export function attentionGradQProgram(d: AttentionDims): GpuProgram {
  return queryRowProgram(
    'poad_attn_dq',
    ['q', 'k', 'v', 'mask', 'stats', 'dy'],
    [d.batch * d.seq, d.heads * d.hd],
    d,
    true,
    (overTiles) => `
        let kvh = head / uniforms.group;
        var qr : array<f32, ${d.hd}>;
        var gr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) {
          let at = (b * S + r) * QW + head * HD + c;
          qr[c] = q[at] * uniforms.scale;
          gr[c] = dy[at];
          acc[c] = 0.0;
        }
        let st = ((b * uniforms.heads + head) * S + r) * 2;
        let L = stats[st];
        let D = stats[st + 1];
        ${overTiles(
          `for (var jj = 0; jj < n; jj = jj + 1) {
            var dot = 0.0;
            var dp = 0.0;
            for (var c = 0; c < HD; c = c + 1) {
              dot = dot + qr[c] * kt[jj * HD + c];
              dp = dp + gr[c] * vt[jj * HD + c];
            }
            let p = exp(dot + mask[(b * S + r) * S + j0 + jj] - L);
            let ds = p * (dp - D);
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] + ds * kt[jj * HD + c]; }
          }`,
        )}
        ${storeQueryRow('acc[c] * uniforms.scale')}`,
  );
}

/**
 * dk (`which` = 'k') or dv ('v'), [batch·seq, kvHeads·hd]: one invocation per key row, summing
 * over the query rows at or after it of every query head of its group, in shared tiles of
 * (scaled q, dO, L, D).
 */
export function attentionGradKVProgram(d: AttentionDims, which: 'k' | 'v'): GpuProgram {
  const wg = rowsPerGroup(d.seq);
  const bq = tileRows(d.hd, 1);
  const dk = which === 'k';
  return program(
    dk ? 'poad_attn_dk' : 'poad_attn_dv',
    ['q', 'k', 'v', 'mask', 'stats', 'dy'],
    [d.batch * d.seq, d.kvHeads * d.hd],
    d,
    wg,
    true,
    `const BQ : i32 = ${bq};
      var<workgroup> qt : array<f32, ${bq * d.hd}>;
      var<workgroup> gt : array<f32, ${bq * d.hd}>;
      var<workgroup> lt : array<f32, ${bq}>;
      var<workgroup> dt : array<f32, ${bq}>;`,
    `
        let kvh = head;
        var kr : array<f32, ${d.hd}>;
        var vr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) {
          let at = (b * S + r) * KW + kvh * HD + c;
          kr[c] = k[at];
          vr[c] = v[at];
          acc[c] = 0.0;
        }
        for (var gi = 0; gi < uniforms.group; gi = gi + 1) {
          let h = kvh * uniforms.group + gi;
          // Tiles of query rows that all come before this block's keys never see them (causal).
          for (var i0 = 0; i0 < S; i0 = i0 + BQ) {
            let live = i0 + BQ > first;
            for (var t = lane; live && t < BQ * HD; t = t + ${wg}) {
              let i = min(i0 + t / HD, S - 1);
              let at = (b * S + i) * QW + h * HD + t % HD;
              qt[t] = q[at] * uniforms.scale;
              gt[t] = dy[at];
            }
            for (var t = lane; live && t < BQ; t = t + ${wg}) {
              let i = min(i0 + t, S - 1);
              let st = ((b * uniforms.heads + h) * S + i) * 2;
              lt[t] = stats[st];
              dt[t] = stats[st + 1];
            }
            workgroupBarrier();
            for (var ii = 0; live && ii < BQ; ii = ii + 1) {
              let i = i0 + ii;
              if (i < S && i >= r && row < S) {
                var dot = 0.0;
                ${dk ? 'var dp = 0.0;' : ''}
                for (var c = 0; c < HD; c = c + 1) {
                  dot = dot + qt[ii * HD + c] * kr[c];
                  ${dk ? 'dp = dp + gt[ii * HD + c] * vr[c];' : ''}
                }
                let p = exp(dot + mask[(b * S + i) * S + r] - lt[ii]);
                ${
                  dk
                    ? `let ds = p * (dp - dt[ii]);
                for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] + ds * qt[ii * HD + c]; }`
                    : `for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] + p * gt[ii * HD + c]; }`
                }
              }
            }
            workgroupBarrier();
          }
        }
        if (row < S) {
          for (var c = 0; c < HD; c = c + 1) {
            result[(b * S + row) * KW + kvh * HD + c] = acc[c];
          }
        }`,
  );
}

/** Sizes of a prefix-shared attention call (see {@link prefixAttentionProgram}). */
export interface PrefixAttentionDims {
  rows: number;
  seq: number;
  groups: number;
  pre: number;
  heads: number;
  kvHeads: number;
  hd: number;
  scale: number;
}

/**
 * Forward-only attention of rows that continue a shared prefix (candidate scoring): row r's
 * queries see the prefix keys of its group g = floor(r / (rows / groups)) and its own keys, with
 * an additive mask [rows, seq, pre + seq] (padding of the prefix, causality of its own keys). q
 * is [rows·seq, heads·hd], kOwn/vOwn [rows, kvHeads, seq, hd], kPre/vPre [groups, kvHeads, pre,
 * hd]; out [rows·seq, heads·hd]. One invocation per (row, position, head), an online softmax over
 * the pre + seq keys in registers; no gradient (scoring only).
 */
export function prefixAttentionProgram(d: PrefixAttentionDims): GpuProgram {
  const n = d.rows * d.seq * d.heads;
  return {
    variableNames: ['q', 'kOwn', 'vOwn', 'kPre', 'vPre', 'mask'],
    outputShape: [d.rows * d.seq, d.heads * d.hd],
    shaderKey: `poad_prefix_attn_${d.hd}`,
    dispatchLayout: { x: [0, 1] },
    dispatch: [Math.ceil(n / 64), 1, 1],
    workgroupSize: [64, 1, 1],
    uniforms: 'rows : i32, seq : i32, per : i32, pre : i32, heads : i32, group : i32, scale : f32,',
    getUserCode: () => `
      const HD : i32 = ${d.hd};
      fn main(index : i32) {
        if (index >= uniforms.rows * uniforms.seq * uniforms.heads) { return; }
        let h = index % uniforms.heads;
        let ri = index / uniforms.heads;
        let i = ri % uniforms.seq;
        let r = ri / uniforms.seq;
        let g = r / uniforms.per;
        let kvh = h / uniforms.group;
        let kvHeads = uniforms.heads / uniforms.group;
        let keys = uniforms.pre + uniforms.seq;
        var qr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        let qAt = ri * uniforms.heads * HD + h * HD;
        for (var c = 0; c < HD; c = c + 1) { qr[c] = q[qAt + c] * uniforms.scale; acc[c] = 0.0; }
        var m = -3.402823e+38;
        var l = 0.0;
        for (var j = 0; j < keys; j = j + 1) {
          var at = 0;
          if (j < uniforms.pre) {
            at = ((g * kvHeads + kvh) * uniforms.pre + j) * HD;
          } else {
            at = ((r * kvHeads + kvh) * uniforms.seq + j - uniforms.pre) * HD;
          }
          var dot = 0.0;
          if (j < uniforms.pre) {
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * kPre[at + c]; }
          } else {
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * kOwn[at + c]; }
          }
          let s = dot + mask[ri * keys + j];
          let mNew = max(m, s);
          let corr = exp(m - mNew);
          let p = exp(s - mNew);
          l = l * corr + p;
          if (j < uniforms.pre) {
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] * corr + p * vPre[at + c]; }
          } else {
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] * corr + p * vOwn[at + c]; }
          }
          m = mNew;
        }
        for (var c = 0; c < HD; c = c + 1) { result[qAt + c] = acc[c] / l; }
      }`,
  };
}

/** Sizes of a ranged attention call (see {@link rangeAttentionProgram}). */
export interface RangeAttentionDims {
  rows: number;
  heads: number;
  kvHeads: number;
  hd: number;
  scale: number;
}

/** The key rows `ranges` gives row `r` (loop body `body` sees `j`), in WGSL. */
const overRanges = (ranges: string, r: string, body: string) => `
        for (var part = 0; part < 2; part = part + 1) {
          let lo = ${ranges}[4 * ${r} + 2 * part];
          let hi = ${ranges}[4 * ${r} + 2 * part + 1];
          for (var j = lo; j < hi; j = j + 1) {
            ${body}
          }
        }`;

/**
 * A program of ranged attention: one invocation per (row, head) — per (key row, kv head) with
 * `kvSide` — in workgroups of 64, `body` seeing `HD`, `KW` (the width of a k row), `kvh` and, on
 * the query side, `h`, `r` and `qAt` (where row r's head h starts in q), on the key side `jr` and
 * `kAt` (where key row jr's kv head starts in k).
 */
function rangeProgram(
  key: string,
  d: RangeAttentionDims,
  variableNames: string[],
  outputShape: number[],
  kvSide: boolean,
  body: string,
): GpuProgram {
  const n = d.rows * (kvSide ? d.kvHeads : d.heads);
  const head = kvSide
    ? `let kvh = index % kvHeads;
        let jr = index / kvHeads;
        let kAt = jr * KW + kvh * HD;`
    : `let h = index % uniforms.heads;
        let r = index / uniforms.heads;
        let kvh = h / uniforms.group;
        let qAt = r * uniforms.heads * HD + h * HD;`;
  return {
    variableNames,
    outputShape,
    shaderKey: `poad_range_attn_${key}_${d.hd}`,
    dispatchLayout: { x: outputShape.map((_, i) => i) },
    dispatch: [Math.ceil(n / 64), 1, 1],
    workgroupSize: [64, 1, 1],
    uniforms: 'rows : i32, heads : i32, group : i32, scale : f32,',
    getUserCode: () => `
      const HD : i32 = ${d.hd};
      fn main(index : i32) {
        let kvHeads = uniforms.heads / uniforms.group;
        if (index >= uniforms.rows * ${kvSide ? 'kvHeads' : 'uniforms.heads'}) { return; }
        let KW = kvHeads * HD;
        ${head}
        ${body}
      }`,
  };
}

/**
 * Attention over packed rows (several sequences one after another, no padding): row r's queries
 * see the key rows of two half-open ranges, `ranges[4r] .. ranges[4r+1]` and
 * `ranges[4r+2] .. ranges[4r+3]` (e.g. its prompt, then its own tokens up to itself). q is
 * [rows, heads·hd], k and v [rows, kvHeads·hd], ranges int32 [4·rows]; out [rows, heads·hd]. One
 * invocation per (row, head), an online softmax over the keys in registers. The backward pass is
 * {@link rangeAttentionStatsProgram}, {@link rangeAttentionGradQProgram} and
 * {@link rangeAttentionGradKVProgram}.
 */
export function rangeAttentionProgram(d: RangeAttentionDims): GpuProgram {
  return rangeProgram(
    'fwd',
    d,
    ['q', 'k', 'v', 'ranges'],
    [d.rows, d.heads * d.hd],
    false,
    `
        var qr : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) { qr[c] = q[qAt + c] * uniforms.scale; acc[c] = 0.0; }
        var m = -3.402823e+38;
        var l = 0.0;
        ${overRanges(
          'ranges',
          'r',
          `let at = j * KW + kvh * HD;
            var dot = 0.0;
            for (var c = 0; c < HD; c = c + 1) { dot = dot + qr[c] * k[at + c]; }
            let mNew = max(m, dot);
            let corr = exp(m - mNew);
            let p = exp(dot - mNew);
            l = l * corr + p;
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] * corr + p * v[at + c]; }
            m = mNew;`,
        )}
        // A row that sees no key (an empty range pair) gets zeros, not 0 / 0.
        let inv = select(0.0, 1.0 / l, l > 0.0);
        for (var c = 0; c < HD; c = c + 1) { result[qAt + c] = acc[c] * inv; }`,
  );
}

/**
 * The backward pass's row constants of {@link rangeAttentionProgram}: per (row, head) the
 * log-sum-exp L of its scores and D = dO·out, as [rows·heads·2] (L, then D, per row and head).
 */
export function rangeAttentionStatsProgram(d: RangeAttentionDims): GpuProgram {
  return rangeProgram(
    'stats',
    d,
    ['q', 'k', 'ranges', 'o', 'dy'],
    [d.rows * d.heads * 2],
    false,
    `
        var qr : array<f32, ${d.hd}>;
        var dd = 0.0;
        for (var c = 0; c < HD; c = c + 1) {
          qr[c] = q[qAt + c] * uniforms.scale;
          dd = dd + dy[qAt + c] * o[qAt + c];
        }
        var m = -3.402823e+38;
        var l = 0.0;
        ${overRanges(
          'ranges',
          'r',
          `let at = j * KW + kvh * HD;
            var s = 0.0;
            for (var c = 0; c < HD; c = c + 1) { s = s + qr[c] * k[at + c]; }
            let mNew = max(m, s);
            l = l * exp(m - mNew) + exp(s - mNew);
            m = mNew;`,
        )}
        result[2 * index] = select(0.0, m + log(l), l > 0.0);
        result[2 * index + 1] = dd;`,
  );
}

/** dq of {@link rangeAttentionProgram}: Σ_j P_ij (dO·v_j − D) k_j · scale over each row's keys. */
export function rangeAttentionGradQProgram(d: RangeAttentionDims): GpuProgram {
  return rangeProgram(
    'dq',
    d,
    ['q', 'k', 'v', 'ranges', 'stats', 'dy'],
    [d.rows, d.heads * d.hd],
    false,
    `
        let L = stats[2 * index];
        let D = stats[2 * index + 1];
        var qr : array<f32, ${d.hd}>;
        var g : array<f32, ${d.hd}>;
        var acc : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) {
          qr[c] = q[qAt + c] * uniforms.scale;
          g[c] = dy[qAt + c];
          acc[c] = 0.0;
        }
        ${overRanges(
          'ranges',
          'r',
          `let at = j * KW + kvh * HD;
            var s = 0.0;
            var dp = 0.0;
            for (var c = 0; c < HD; c = c + 1) {
              s = s + qr[c] * k[at + c];
              dp = dp + g[c] * v[at + c];
            }
            let ds = exp(s - L) * (dp - D);
            for (var c = 0; c < HD; c = c + 1) { acc[c] = acc[c] + ds * k[at + c]; }`,
        )}
        for (var c = 0; c < HD; c = c + 1) { result[qAt + c] = acc[c] * uniforms.scale; }`,
  );
}

/**
 * dk or dv of {@link rangeAttentionProgram}, [rows, kvHeads·hd]: per key row j and kv head, over
 * the query rows that see j (`back`: two half-open ranges of query rows per key row, the inverse
 * of `ranges`) and the group's query heads, dk = Σ dS_ij q_i · scale or dv = Σ P_ij dO_i.
 */
export function rangeAttentionGradKVProgram(d: RangeAttentionDims, which: 'k' | 'v'): GpuProgram {
  return rangeProgram(
    `d${which}`,
    d,
    ['q', 'k', 'v', 'back', 'stats', 'dy'],
    [d.rows, d.kvHeads * d.hd],
    true,
    `
        var kr : array<f32, ${d.hd}>;
        var vr : array<f32, ${d.hd}>;
        var dk : array<f32, ${d.hd}>;
        var dv : array<f32, ${d.hd}>;
        for (var c = 0; c < HD; c = c + 1) {
          kr[c] = k[kAt + c];
          vr[c] = v[kAt + c];
          dk[c] = 0.0;
          dv[c] = 0.0;
        }
        ${overRanges(
          'back',
          'jr',
          `for (var t = 0; t < uniforms.group; t = t + 1) {
              let h = kvh * uniforms.group + t;
              let qAt = j * uniforms.heads * HD + h * HD;
              let L = stats[2 * (j * uniforms.heads + h)];
              let D = stats[2 * (j * uniforms.heads + h) + 1];
              var s = 0.0;
              var dp = 0.0;
              for (var c = 0; c < HD; c = c + 1) {
                s = s + q[qAt + c] * kr[c];
                dp = dp + dy[qAt + c] * vr[c];
              }
              let p = exp(s * uniforms.scale - L);
              let ds = p * (dp - D);
              for (var c = 0; c < HD; c = c + 1) {
                dv[c] = dv[c] + p * dy[qAt + c];
                dk[c] = dk[c] + ds * q[qAt + c];
              }
            }`,
        )}
        for (var c = 0; c < HD; c = c + 1) {
          ${which === 'k' ? 'result[kAt + c] = dk[c] * uniforms.scale;' : 'result[kAt + c] = dv[c];'}
        }`,
  );
}
