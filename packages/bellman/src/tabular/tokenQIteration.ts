import { checkUnitInterval } from '../validate.js';
import { type IterationOptions, type IterationReport, iterationLimits } from './options.js';
import { tokenSweeps } from './sweeps.js';
import { buildTries, type TokenMdp, type TokenTrie } from './tokenMdp.js';

/**
 * Token-level values on each state's token trie.
 * - `q[s][n]`: Q of the token that leads into node n (NaN for the root, n = 0),
 *   i.e. Q(o_s, w^{1:j-1}, w^j) where node n spells w^{1:j}.
 * - `v[s][n]`: value of node n, V(o_s, w^{1:j}); `v[s][0]` = V(o_s).
 */
export interface TokenQTable extends IterationReport {
  tries: TokenTrie[];
  q: Float64Array[];
  v: Float64Array[];
}

/** Options of the token-level optimality backups. */
export interface TokenQOptions extends IterationOptions {
  /** γ (γ_a in the paper), the discount between actions. */
  gamma: number;
  /** γ_w, the discount between tokens of one action. 1 = BAD. */
  intraGamma?: number;
}

/**
 * Value iteration for the token-level optimality backup with intra-action discount γ_w
 * (paper eq. 9; eq. 13 when γ_w = 1):
 * - inner token:  Q(o, w^{1:j-1}, w^j) ← γ_w·max_w' Q(o, w^{1:j}, w')
 * - last token:   Q(o, w^{1:j-1}, w^j) ← r(o, a) + γ·Σ P(o'|o, a)·max_w' Q(o', w')
 */
export function tokenQIteration(mdp: TokenMdp, options: TokenQOptions): TokenQTable {
  const FN = 'tokenQIteration';
  const gamma = checkUnitInterval(FN, 'options.gamma', options.gamma);
  const intraGamma =
    options.intraGamma === undefined
      ? 1
      : checkUnitInterval(FN, 'options.intraGamma', options.intraGamma);
  const limits = iterationLimits(options);
  const tries = buildTries(mdp);
  const sweeps = tokenSweeps(mdp, tries, gamma, intraGamma, limits, (_, qs, kids) => {
    let best = Number.NEGATIVE_INFINITY;
    for (const c of kids) if (qs[c]! > best) best = qs[c]!;
    return best;
  });
  return { tries, ...sweeps };
}

/** BAD (paper eq. 13): `tokenQIteration` with γ_w = 1. Keeps the action-level optimum. */
export function badQIteration(
  mdp: TokenMdp,
  options: { gamma: number } & IterationOptions,
): TokenQTable {
  return tokenQIteration(mdp, { ...options, intraGamma: 1 });
}

/** NTPO (paper eq. 9): `tokenQIteration` with γ_w = `intraGamma` (default γ). */
export function ntpoQIteration(
  mdp: TokenMdp,
  options: { gamma: number; intraGamma?: number } & IterationOptions,
): TokenQTable {
  return tokenQIteration(mdp, { ...options, intraGamma: options.intraGamma ?? options.gamma });
}

/** Node reached by `tokens` from the root of state `s`'s trie, or -1 if no action spells it. */
export function trieNode(trie: TokenTrie, tokens: readonly number[]): number {
  let node = 0;
  for (const w of tokens) {
    let next = -1;
    for (const c of trie.children[node]!) {
      if (trie.token[c] === w) {
        next = c;
        break;
      }
    }
    if (next === -1) return -1;
    node = next;
  }
  return node;
}

/**
 * Q of the last token of `tokens` in state `s`: Q(o_s, w^{1:j-1}, w^j) with `tokens` = w^{1:j}.
 * Throws RangeError if no action of the state starts with `tokens`.
 */
export function tokenQ(table: TokenQTable, s: number, tokens: readonly number[]): number {
  const trie = table.tries[s];
  if (!trie) throw new RangeError(`tokenQ: state ${s} does not exist`);
  if (tokens.length === 0) throw new RangeError('tokenQ: `tokens` must hold at least one token');
  const node = trieNode(trie, tokens);
  if (node < 0) {
    throw new RangeError(
      `tokenQ: no action of state ${s} starts with tokens [${tokens.join(', ')}]`,
    );
  }
  return table.q[s]![node]!;
}
