// Exact values at every token prefix of a chosen label, from the label-level policy and Q.
// The math is in docs/critic-error.md.

import { buildTokenTrie, type TokenTrie } from './tabular/tokenMdp.js';

/** Options of {@link softPrefixValues}. */
export interface SoftPrefixOptions {
  /** β ≥ 0, the temperature of the KL term (0 gives {@link prefixValues}). */
  beta: number;
  /**
   * The reference π̄ over the label tree: `referenceLogProbs[a][k]` = log π̄(w_k | s, w_<k) for
   * the k-th token of label a, renormalised over the tokens that continue some label after that
   * prefix (the continuations of each prefix sum to 1). Where labels share a prefix, the first
   * label's entry for a shared token is the one read. Default: uniform over the continuations.
   */
  referenceLogProbs?: readonly ArrayLike<number>[];
}

/** Checks the labels' token ids: a non-empty list of non-empty arrays of integers. */
function readLabelIds(fn: string, labelIds: unknown): readonly ArrayLike<number>[] {
  if (!Array.isArray(labelIds) || labelIds.length === 0) {
    throw new TypeError(
      `${fn}: \`labelIds\` must be a non-empty array with each label's token ids (an Int32Array or number[] per label), got ${labelIds === null ? 'null' : typeof labelIds}`,
    );
  }
  labelIds.forEach((ids: unknown, a) => {
    if (
      ids === null ||
      typeof ids !== 'object' ||
      typeof (ids as { length?: unknown }).length !== 'number'
    ) {
      throw new TypeError(`${fn}: \`labelIds[${a}]\` must be an array of token ids`);
    }
    const arr = ids as ArrayLike<unknown>;
    if (arr.length === 0) {
      throw new RangeError(
        `${fn}: \`labelIds[${a}]\` is empty; every label has at least one token (pass the ids the tokenizer gave it)`,
      );
    }
    for (let k = 0; k < arr.length; k++) {
      if (!Number.isInteger(arr[k])) {
        throw new TypeError(
          `${fn}: \`labelIds[${a}][${k}]\` must be an integer token id, got ${String(arr[k])}`,
        );
      }
    }
  });
  return labelIds as readonly ArrayLike<number>[];
}

function readNumbers(
  fn: string,
  field: string,
  xs: unknown,
  n: number,
  what: string,
  per = 'label, in the order of `labelIds`',
): ArrayLike<number> {
  if (
    xs === null ||
    typeof xs !== 'object' ||
    typeof (xs as { length?: unknown }).length !== 'number'
  ) {
    throw new TypeError(`${fn}: \`${field}\` must be an array with one ${what} per ${per}`);
  }
  const arr = xs as ArrayLike<unknown>;
  if (arr.length !== n) {
    throw new RangeError(
      `${fn}: \`${field}\` has length ${arr.length} but must have length ${n}: one ${what} per ${per}`,
    );
  }
  for (let a = 0; a < n; a++) {
    const x = arr[a];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new RangeError(`${fn}: \`${field}[${a}]\` must be a finite number, got ${String(x)}`);
    }
  }
  return arr as ArrayLike<number>;
}

/** π(a|s) per label: finite, ≥ 0, with a positive total (divided out where it matters). */
function readProbs(fn: string, probs: unknown, n: number): ArrayLike<number> {
  const p = readNumbers(fn, 'probs', probs, n, 'probability');
  let total = 0;
  for (let a = 0; a < n; a++) {
    if (p[a]! < 0) {
      throw new RangeError(`${fn}: \`probs[${a}]\` is ${p[a]}; probabilities are ≥ 0`);
    }
    total += p[a]!;
  }
  if (!(total > 0)) {
    throw new RangeError(
      `${fn}: \`probs\` are all 0; pass the label-level policy π(·|s) of the state (it sums to 1)`,
    );
  }
  return p;
}

function readChosen(fn: string, chosen: unknown, n: number): number {
  if (typeof chosen !== 'number' || !Number.isInteger(chosen) || chosen < 0 || chosen >= n) {
    throw new RangeError(
      `${fn}: \`chosen\` must be the index of a label in 0..${n - 1}, got ${String(chosen)}`,
    );
  }
  return chosen;
}

/**
 * The arguments of a prefix-value function, checked in order: the labels, their probabilities
 * (where the function takes them), their Q values (`qWhat` names them in errors), the chosen
 * label.
 */
function readLabelArgs(
  fn: string,
  labelIds: unknown,
  probs: { value: unknown } | null,
  q: unknown,
  qWhat: string,
  chosen: unknown,
): { ids: readonly ArrayLike<number>[]; p: ArrayLike<number>; qs: ArrayLike<number>; c: number } {
  const ids = readLabelIds(fn, labelIds);
  const n = ids.length;
  const p = probs === null ? new Float64Array(n).fill(1) : readProbs(fn, probs.value, n);
  const qs = readNumbers(fn, 'q', q, n, qWhat);
  return { ids, p, qs, c: readChosen(fn, chosen, n) };
}

/**
 * Calls `visit(k, members)` for k = 0..|chosen|−1 with the labels that still have a k-th token
 * to write after the chosen label's first k tokens: those at least k + 1 tokens long whose first
 * k tokens are the chosen label's. At k = 0 that is every label.
 */
function forEachPrefix(
  ids: readonly ArrayLike<number>[],
  chosen: number,
  visit: (k: number, members: readonly number[]) => void,
): void {
  const own = ids[chosen]!;
  let members = ids.map((_, a) => a);
  for (let k = 0; k < own.length; k++) {
    if (k > 0) {
      const w = own[k - 1];
      members = members.filter((a) => ids[a]!.length > k && ids[a]![k - 1] === w);
    }
    visit(k, members);
  }
}

/**
 * The exact token-prefix values of a label-level policy in one state: for the chosen label
 * w = (w_0, …, w_{n−1}), entry k (k = 0..n−1) is the value before token k,
 *
 *   V^π(s, w_<k) = Σ_{a∈L_k} π(a|s)·Q^π(s, a) / Σ_{a∈L_k} π(a|s),
 *
 * where L_k is the set of labels that still have a k-th token to write after w_<k: those at
 * least k + 1 tokens long that begin with w_<k. At k = 0 it is every label, so entry 0 is
 * V^π(s); a label equal to w_<k has ended and is not in L_k. Entry n, after the last token, is
 * Q^π(s, w). This is the value the BAD backup gives each position inside an action (no reward,
 * no discount until the last token). A prefix whose labels all have probability 0 has no
 * value: its entry is NaN.
 *
 * @param labelIds every label's token ids, exactly as the tokenizer gave them (the order of `probs` and `q`)
 * @param probs π(a|s) per label (any non-negative weights with a positive sum: only ratios matter)
 * @param q Q^π(s, a) per label
 * @param chosen the index of the label whose prefixes are wanted
 * @returns n + 1 values: before each token, then Q^π(s, w)
 */
export function prefixValues(
  labelIds: readonly ArrayLike<number>[],
  probs: ArrayLike<number>,
  q: ArrayLike<number>,
  chosen: number,
): Float64Array {
  const { ids, p, qs, c } = readLabelArgs(
    'prefixValues',
    labelIds,
    { value: probs },
    q,
    'Q value',
    chosen,
  );
  const out = new Float64Array(ids[c]!.length + 1);
  forEachPrefix(ids, c, (k, members) => {
    let mass = 0;
    let sum = 0;
    for (const a of members) {
      if (p[a] === 0) continue;
      mass += p[a]!;
      sum += p[a]! * qs[a]!;
    }
    out[k] = mass > 0 ? sum / mass : Number.NaN;
  });
  out[out.length - 1] = qs[c]!;
  return out;
}

/**
 * The optimal token-prefix values in one state: entry k of the chosen label w is
 * V*(s, w_<k) = max_{a∈L_k} Q*(s, a), with L_k as in {@link prefixValues}, and entry n is
 * Q*(s, w). These are the fixed point of the BAD optimality backup on the label tree (every
 * prefix is worth its best completion), which `badQIteration` computes by value iteration.
 */
export function optimalPrefixValues(
  labelIds: readonly ArrayLike<number>[],
  q: ArrayLike<number>,
  chosen: number,
): Float64Array {
  const { ids, qs, c } = readLabelArgs('optimalPrefixValues', labelIds, null, q, 'Q value', chosen);
  const out = new Float64Array(ids[c]!.length + 1);
  forEachPrefix(ids, c, (k, members) => {
    let best = Number.NEGATIVE_INFINITY;
    for (const a of members) if (qs[a]! > best) best = qs[a]!;
    out[k] = best;
  });
  out[out.length - 1] = qs[c]!;
  return out;
}

/** The label tree of a state (prefix-free labels), with log π̄ of the token into each node. */
interface ReferenceTree {
  readonly trie: TokenTrie;
  /** log π̄ of the token leading into each node (NaN at the root). */
  readonly logRef: Float64Array;
}

/** Tolerance on the sum of a prefix's reference probabilities. */
const REFERENCE_SUM_TOLERANCE = 1e-6;

function referenceTree(
  fn: string,
  ids: readonly ArrayLike<number>[],
  referenceLogProbs: unknown,
): ReferenceTree {
  for (let a = 0; a < ids.length; a++) {
    for (let b = 0; b < ids.length; b++) {
      const x = ids[a]!;
      const y = ids[b]!;
      if (a === b || x.length > y.length) continue;
      let shared = true;
      for (let k = 0; k < x.length && shared; k++) shared = x[k] === y[k];
      if (!shared) continue;
      throw new RangeError(
        x.length === y.length
          ? `${fn}: \`labelIds[${Math.min(a, b)}]\` and \`labelIds[${Math.max(a, b)}]\` are the same token ids; the soft values need a label tree in which every label ends at its own leaf (tokenise the labels apart)`
          : `${fn}: \`labelIds[${a}]\` is a prefix of \`labelIds[${b}]\`, so the label tree cannot tell where label ${a} ends and the KL of that choice has no token; the soft values need prefix-free labels (end each label with a stop token)`,
      );
    }
  }
  const trie = buildTokenTrie(ids.map((t) => ({ tokens: Array.from(t), reward: 0, next: [] })));
  const logRef = new Float64Array(trie.parent.length).fill(Number.NaN);
  if (referenceLogProbs === undefined) {
    trie.children.forEach((kids) => {
      for (const c of kids) logRef[c] = -Math.log(kids.length);
    });
    return { trie, logRef };
  }
  if (!Array.isArray(referenceLogProbs) || referenceLogProbs.length !== ids.length) {
    throw new RangeError(
      `${fn}: \`options.referenceLogProbs\` must be an array with one array of token log-probs per label (${ids.length} labels)`,
    );
  }
  ids.forEach((t, a) => {
    const lp = readNumbers(
      fn,
      `options.referenceLogProbs[${a}]`,
      referenceLogProbs[a],
      t.length,
      'log-prob',
      `token of label ${a}`,
    );
    // Walk the label's path; the first label to reach a node sets its reference.
    let node = 0;
    for (let k = 0; k < t.length; k++) {
      node = trie.children[node]!.find((c) => trie.token[c] === t[k])!;
      if (Number.isNaN(logRef[node]!)) logRef[node] = lp[k]!;
    }
  });
  trie.children.forEach((kids, node) => {
    if (kids.length === 0) return;
    let total = 0;
    for (const c of kids) total += Math.exp(logRef[c]!);
    if (!(Math.abs(total - 1) <= REFERENCE_SUM_TOLERANCE)) {
      const prefix: number[] = [];
      for (let m = node; m > 0; m = trie.parent[m]!) prefix.unshift(trie.token[m]!);
      throw new RangeError(
        `${fn}: the reference probabilities of the tokens continuing prefix [${prefix.join(', ')}] sum to ${total}; renormalise π̄ over each prefix's continuations (the label tree's restricted reference) so they sum to 1`,
      );
    }
  });
  return { trie, logRef };
}

/**
 * log π̄(a|s) of every label under a token-level reference over the label tree: the sum of the
 * label's token log-probs, π̄(a|s) = Π_k π̄(w_k | s, w_<k) (default: uniform over each prefix's
 * continuations). This is the action-level reference under which the action-level KL equals the
 * sum of the token-level KLs; pass it to `softPolicyEvaluation` to get the Q_soft that
 * {@link softPrefixValues} needs. The labels must be prefix-free.
 */
export function labelLogReference(
  labelIds: readonly ArrayLike<number>[],
  referenceLogProbs?: readonly ArrayLike<number>[],
): Float64Array {
  const FN = 'labelLogReference';
  const ids = readLabelIds(FN, labelIds);
  const { trie, logRef } = referenceTree(FN, ids, referenceLogProbs);
  return Float64Array.from(ids, (_, a) => {
    let lp = 0;
    for (let n = trie.actionNode[a]!; n > 0; n = trie.parent[n]!) lp += logRef[n]!;
    return lp;
  });
}

/**
 * The exact soft token-prefix values of a label-level policy in one state (soft BAD, as ETPO's
 * critic learns them): for the chosen label w, entry k (k = 0..n−1) is
 *
 *   V_soft(s, w_<k) = Σ_{a∈L_k} π_k(a)·[Q_soft(s, a) − β·log(π_k(a)/π̄_k(a))],
 *
 * with L_k the labels continuing w_<k, π_k(a) = π(a|s)/Σ_{L_k} π the policy's probability of
 * completing w_<k as a, and π̄_k(a) = Π_{j≥k} π̄(a_j | s, a_<j) the reference's. It equals the
 * token-level soft value E_{v∼π(·|s,w_<k)}[Q_soft(s, w_<k, v)] − β·KL(π‖π̄)(·|s, w_<k) of the
 * token tree, with the token policy π(v|s, w_<k) = Σ_{L_{k+1}} π / Σ_{L_k} π that the label-level
 * policy induces. Entry 0 is V_soft(s) = Σ_a π(a|s)·[Q_soft(s, a) − β·log(π(a|s)/π̄(a|s))] with
 * the product reference ({@link labelLogReference}); entry n is Q_soft(s, w), the soft Q of the
 * last token; the soft Q of any other token k is entry k + 1. A prefix of probability 0 is NaN.
 *
 * `q` must be the soft Q of the same policy with the same product reference, e.g. from
 * `softPolicyEvaluation`. The labels must be prefix-free (the label tree of the
 * `tokenSpace: 'labels'` sampler).
 */
export function softPrefixValues(
  labelIds: readonly ArrayLike<number>[],
  probs: ArrayLike<number>,
  q: ArrayLike<number>,
  chosen: number,
  options: SoftPrefixOptions,
): Float64Array {
  const FN = 'softPrefixValues';
  const { ids, p, qs, c } = readLabelArgs(
    FN,
    labelIds,
    { value: probs },
    q,
    'soft Q value',
    chosen,
  );
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${FN}: \`options\` must be an object like { beta: 0.1 }`);
  }
  const beta = options.beta;
  if (typeof beta !== 'number' || !(beta >= 0) || !Number.isFinite(beta)) {
    throw new RangeError(
      `${FN}: \`options.beta\` must be a finite number ≥ 0, got ${String(beta)}`,
    );
  }
  const { trie, logRef } = referenceTree(FN, ids, options.referenceLogProbs);
  // suffix[a][k] = log π̄ of label a's tokens k.. = log π̄_k(a).
  const suffix = ids.map((t, a) => {
    const out = new Float64Array(t.length + 1);
    let node = trie.actionNode[a]!;
    for (let k = t.length - 1; k >= 0; k--) {
      out[k] = out[k + 1]! + logRef[node]!;
      node = trie.parent[node]!;
    }
    return out;
  });
  const out = new Float64Array(ids[c]!.length + 1);
  forEachPrefix(ids, c, (k, members) => {
    let mass = 0;
    for (const a of members) mass += p[a]!;
    if (!(mass > 0)) {
      out[k] = Number.NaN;
      return;
    }
    let value = 0;
    for (const a of members) {
      if (p[a] === 0) continue;
      const pk = p[a]! / mass;
      value += pk * (qs[a]! - beta * (Math.log(pk) - suffix[a]![k]!));
    }
    out[k] = value;
  });
  out[out.length - 1] = qs[c]!;
  return out;
}
