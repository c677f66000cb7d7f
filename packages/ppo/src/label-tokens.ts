import { PolicyContractError, PpoConfigError } from './errors.js';
import type { RolloutBuffer } from './rollout-buffer.js';

/**
 * The token space restricted to the valid labels (`tokenSpace: 'labels'`).
 *
 * The candidate labels' in-context ids form a prefix tree. At token k of candidate c, the tokens
 * that continue *some* valid label after c's prefix w_<k are the distinct k-th ids of the
 * candidates that share that prefix. The restricted token policy renormalises the language
 * model's next-token distribution over exactly those tokens:
 *
 *   π_L(w_k | o, w_<k) = π(w_k | o, w_<k) / Σ_{v ∈ next(w_<k)} π(v | o, w_<k)
 *
 * and a label's probability is the product of its restricted token probabilities. These label
 * probabilities sum to 1 over the candidates, so sampling a label from them and optimising the
 * per-token ratios of π_L is the same policy twice: nothing leaks to tokens that no label uses.
 * A token with a single continuation has π_L = 1 and carries no gradient.
 */

/**
 * The error for `tokenSpace: 'labels'` meeting an open action space (no label list to build a
 * tree from); `where` names it, e.g. "env 2".
 */
export function openActionSpaceError(where: string): PpoConfigError {
  return new PpoConfigError(
    'config.tokenSpace',
    `'labels' needs a restricted action space (a list of valid labels per step); ${where} has an open one. Use tokenSpace 'vocabulary'.`,
  );
}

/**
 * For each candidate and each of its tokens, the distinct ids continuing its prefix among all
 * candidates: `result[c][k]` holds `cands[c][k]` first, then the other continuations in order of
 * first appearance.
 *
 * @throws PolicyContractError when two candidates have the same ids, or one candidate's ids are
 * a proper prefix of another's (the tree would need an end-of-label token to tell them apart).
 */
export function nextTokenSets(cands: readonly Int32Array[]): Int32Array[][] {
  for (let a = 0; a < cands.length; a++) {
    for (let b = 0; b < cands.length; b++) {
      if (a === b) continue;
      const x = cands[a]!;
      const y = cands[b]!;
      if (x.length <= y.length && sharesPrefix(x, y, x.length)) {
        throw new PolicyContractError(
          'tokenSpace labels',
          x.length === y.length
            ? `candidates ${a} and ${b} have the same token ids; labels must tokenise differently.`
            : `candidate ${a}'s token ids are a prefix of candidate ${b}'s, so the label tree cannot tell where ${a} ends; rename one label or use tokenSpace 'vocabulary'.`,
        );
      }
    }
  }
  return cands.map((c) =>
    Array.from(c, (own, k) => {
      const ids = [own];
      for (const other of cands) {
        const t = other[k];
        if (t === undefined || ids.includes(t) || !sharesPrefix(c, other, k)) continue;
        ids.push(t);
      }
      return Int32Array.from(ids);
    }),
  );
}

function sharesPrefix(a: Int32Array, b: Int32Array, k: number): boolean {
  if (a.length < k || b.length < k) return false;
  for (let j = 0; j < k; j++) if (a[j] !== b[j]) return false;
  return true;
}

/**
 * Restricted per-token log-probs log π_L of every candidate, from the language model's own
 * per-token log-probs of every candidate (`perToken[c][k]` = log π(cands[c][k] | o, cands[c][<k])).
 * Every continuation v of a prefix is the k-th token of some candidate, so the normaliser
 * needs no further model call; where several candidates give the same (prefix, token), the
 * first one's log-prob is used.
 */
export function restrictedLogProbs(
  cands: readonly Int32Array[],
  perToken: readonly ArrayLike<number>[],
): Float64Array[] {
  const sets = nextTokenSets(cands);
  return cands.map((c, ci) =>
    Float64Array.from(c, (_, k) => {
      const own = perToken[ci]![k]!;
      let max = own;
      const lps: number[] = [];
      for (const v of sets[ci]![k]!) {
        const src = cands.findIndex((o) => o[k] === v && sharesPrefix(c, o, k));
        const lp = perToken[src]![k]!;
        lps.push(lp);
        if (lp > max) max = lp;
      }
      let s = 0;
      for (const lp of lps) s += Math.exp(lp - max);
      return own - (max + Math.log(s));
    }),
  );
}

/**
 * `tokenSpace: 'labels'`: for each of the buffer's samples `rows`, the label-tree continuations
 * at every token of its chosen action (`TokenBatch.allowed`), from the candidates stored with it.
 *
 * @throws PpoConfigError when a sample has no candidates (an open action space).
 */
export function allowedTokenSets(buffer: RolloutBuffer, rows: ArrayLike<number>): Int32Array[][] {
  return Array.from(rows, (i) => {
    const cands = buffer.candidates(i);
    if (cands.length === 0) throw openActionSpaceError('this environment');
    return nextTokenSets(cands)[buffer.chosen[i]!]!;
  });
}
