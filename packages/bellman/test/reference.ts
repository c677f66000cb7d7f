// A literal transcription of the reference buffer loops (algorithms.md §1.3): padded [T][L]
// arrays, the last token found by scanning back for a non-pad id. Written independently of
// src/ and kept deliberately plain; used as an oracle by the property tests and as the
// baseline of the benchmark.

export type Algo = 'poad' | 'ntpo' | 'archer';

export function paddedTokenGae(
  algo: Algo,
  tok: number[][], // [T][L], pad id 0
  v: number[][], // [T+1][L]; v[T][0] = bootstrap
  r: number[],
  mNext: number[], // m[t+1]
  gamma: number,
  lam: number,
  intraGamma = algo === 'poad' ? 1 : gamma,
): { A: number[][]; R: number[][] } {
  const T = tok.length;
  const L = tok[0]?.length ?? 0;
  const A = Array.from({ length: T }, () => new Array<number>(L).fill(0));
  const R = Array.from({ length: T }, () => new Array<number>(L).fill(0));
  const last = (t: number) => {
    if (t === T) return 0;
    let k = L - 1;
    while (k > 0 && tok[t]![k] === 0) k--;
    return k;
  };
  let g = 0;
  for (let t = T - 1; t >= 0; t--) {
    const l = last(t);
    for (let k = l; k >= 0; k--) {
      let delta: number;
      if (k === l) {
        const vNext = algo === 'archer' ? v[t + 1]![last(t + 1)]! : v[t + 1]![0]!;
        delta = r[t]! + gamma * mNext[t]! * vNext - v[t]![k]!;
        g = delta + gamma * lam * mNext[t]! * g;
      } else {
        delta = intraGamma * v[t]![k + 1]! - v[t]![k]!;
        g = delta + intraGamma * lam * g;
      }
      A[t]![k] = g;
      R[t]![k] = g + v[t]![k]!;
    }
  }
  return { A, R };
}

/** Converts a ragged segment into the padded layout of `paddedTokenGae`. */
export function toPadded(seg: {
  rewards: number[];
  dones: boolean[];
  tokenCounts: number[];
  values: number[];
  bootstrapValue: number;
}) {
  const T = seg.rewards.length;
  const L = Math.max(1, ...seg.tokenCounts);
  const tok: number[][] = [];
  const v: number[][] = [];
  let o = 0;
  for (let t = 0; t < T; t++) {
    const n = seg.tokenCounts[t]!;
    tok.push(Array.from({ length: L }, (_, k) => (k < n ? 7 + k : 0)));
    v.push(Array.from({ length: L }, (_, k) => (k < n ? seg.values[o + k]! : 0)));
    o += n;
  }
  v.push(Array.from({ length: L }, (_, k) => (k === 0 ? seg.bootstrapValue : 0)));
  return { tok, v, r: seg.rewards, mNext: seg.dones.map((d) => (d ? 0 : 1)) };
}

/** Flattens the valid slots of a padded result back into the ragged layout. */
export function flatValid(rows: number[][], tokenCounts: number[]): number[] {
  return rows.flatMap((row, t) => row.slice(0, tokenCounts[t]));
}
