import { ModelInputError } from './errors.js';
import type { SeededRng } from './rng.js';

/** How the next token is drawn from the logits. */
export interface SamplingOptions {
  /** Softmax temperature; 0 means greedy (argmax). Default 1. */
  temperature?: number;
  /** Keep only the k most likely tokens (0 or undefined: all). */
  topK?: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p (1: all). */
  topP?: number;
}

/** Check sampling options, naming the bad field. */
export function checkSampling(o: SamplingOptions): void {
  const t = o.temperature ?? 1;
  if (!(t >= 0) || !Number.isFinite(t))
    throw new ModelInputError('temperature', `must be >= 0, got ${t}`);
  if (o.topK !== undefined && (!Number.isInteger(o.topK) || o.topK < 0)) {
    throw new ModelInputError('topK', `must be an integer >= 0, got ${o.topK}`);
  }
  const p = o.topP ?? 1;
  if (!(p > 0 && p <= 1)) throw new ModelInputError('topP', `must be in (0, 1], got ${p}`);
}

/** log-softmax value of `logits[index]` (temperature 1, full vocabulary), in double precision. */
export function logSoftmaxAt(logits: ArrayLike<number>, index: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] as number) - max);
  return (logits[index] as number) - max - Math.log(sum);
}

/** `a` ranks before `b`: a larger logit, or an equal one at a smaller index. */
function ranksBefore(logits: ArrayLike<number>, a: number, b: number): boolean {
  const x = logits[a] as number;
  const y = logits[b] as number;
  return x > y || (x === y && a < b);
}

/**
 * The indices of the `k` largest logits, largest first (ties: smaller index first) — the first
 * `k` of the fully sorted order. For k well below the vocabulary it keeps a sorted list of the
 * best k seen so far, so most logits cost one comparison instead of a full sort's log n.
 */
export function topIndices(logits: ArrayLike<number>, k: number): number[] {
  const n = logits.length;
  if (k >= n / 4) {
    const all = Array.from({ length: n }, (_, i) => i);
    all.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
    return all.slice(0, k);
  }
  const best: number[] = [];
  for (let i = 0; i < n; i++) {
    if (best.length === k && !ranksBefore(logits, i, best[k - 1] as number)) continue;
    let at = best.length === k ? k - 1 : best.length;
    while (at > 0 && ranksBefore(logits, i, best[at - 1] as number)) {
      best[at] = best[at - 1] as number;
      at--;
    }
    best[at] = i;
  }
  return best;
}

/**
 * Draw one token id from `logits` with temperature, top-k and top-p (nucleus) filtering.
 * Returns the id and its log-probability under the filtered, tempered distribution
 * (0 for greedy).
 */
export function sampleToken(
  logits: ArrayLike<number>,
  o: SamplingOptions,
  rng: SeededRng,
): { token: number; samplerLogProb: number } {
  const n = logits.length;
  const t = o.temperature ?? 1;
  if (t === 0) {
    let best = 0;
    for (let i = 1; i < n; i++) if ((logits[i] as number) > (logits[best] as number)) best = i;
    return { token: best, samplerLogProb: 0 };
  }
  const k = o.topK && o.topK > 0 ? Math.min(o.topK, n) : n;
  return sampleAmong(logits, topIndices(logits, k), t, o.topP ?? 1, rng);
}

/**
 * The draw of {@link sampleToken} once top-k has chosen the candidates `idx` (indices of
 * `logits`, largest first): temperature `t`, then the smallest prefix of `idx` holding
 * probability `p` (nucleus), then one draw from `rng`.
 */
export function sampleAmong(
  logits: ArrayLike<number>,
  candidates: number[],
  t: number,
  p: number,
  rng: SeededRng,
): { token: number; samplerLogProb: number } {
  let idx = candidates;
  const max = (logits[idx[0] as number] as number) / t;
  let probs = idx.map((i) => Math.exp((logits[i] as number) / t - max));
  let total = probs.reduce((a, b) => a + b, 0);
  if (p < 1) {
    let cum = 0;
    let keep = 0;
    while (keep < probs.length) {
      cum += (probs[keep] as number) / total;
      keep++;
      if (cum >= p) break;
    }
    idx = idx.slice(0, keep);
    probs = probs.slice(0, keep);
    total = probs.reduce((a, b) => a + b, 0);
  }
  let u = rng.next() * total;
  let pick = idx.length - 1;
  for (let j = 0; j < idx.length; j++) {
    u -= probs[j] as number;
    if (u < 0) {
      pick = j;
      break;
    }
  }
  return { token: idx[pick] as number, samplerLogProb: Math.log((probs[pick] as number) / total) };
}
