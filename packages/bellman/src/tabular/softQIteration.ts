import { checkUnitInterval } from '../validate.js';
import type { ActionQTable } from './actionQIteration.js';
import { type IterationOptions, iterationLimits } from './options.js';
import { actionSweeps, tokenSweeps } from './sweeps.js';
import { buildTries, type TokenMdp, type TokenTrie } from './tokenMdp.js';
import type { TokenQTable } from './tokenQIteration.js';

/** π̄(a|s): the action-level reference policy. */
export type ActionReference = (state: number, action: number) => number;
/** π̄(w|o, w^{1:j-1}): the token-level reference policy over the tokens that continue some action. */
export type TokenReference = (state: number, prefix: readonly number[], token: number) => number;

export interface SoftOptions extends IterationOptions {
  /** γ, the discount between actions. */
  gamma: number;
  /** β > 0, the temperature of the KL (or entropy, with a uniform reference) regulariser. */
  beta: number;
}

/** Soft token-level values plus what is needed to read the optimal soft policy. */
export interface SoftTokenQTable extends TokenQTable {
  beta: number;
  /** log π̄ of the token leading into each node (NaN at the root). */
  logReference: Float64Array[];
}

/** γ, β and the stopping rule of `options`, checked in that order. */
function readSoftOptions(
  fn: string,
  options: SoftOptions,
): { gamma: number; beta: number; limits: ReturnType<typeof iterationLimits> } {
  const gamma = checkUnitInterval(fn, 'options.gamma', options.gamma);
  const beta: unknown = options.beta;
  if (typeof beta !== 'number' || !(beta > 0) || !Number.isFinite(beta)) {
    throw new RangeError(
      `${fn}: \`options.beta\` must be a finite number > 0, got ${String(beta)}`,
    );
  }
  return { gamma, beta, limits: iterationLimits(options) };
}

/** β·log Σ_i exp(logp_i + q_i/β), stable; entries with logp = -∞ drop out. */
function softmaxValue(
  logp: ArrayLike<number>,
  q: ArrayLike<number>,
  idx: readonly number[],
  beta: number,
): number {
  let m = Number.NEGATIVE_INFINITY;
  for (const i of idx) {
    const z = (logp[i] as number) + (q[i] as number) / beta;
    if (z > m) m = z;
  }
  if (m === Number.NEGATIVE_INFINITY) return Number.NEGATIVE_INFINITY;
  let s = 0;
  for (const i of idx) s += Math.exp((logp[i] as number) + (q[i] as number) / beta - m);
  return beta * (m + Math.log(s));
}

function checkDistribution(fn: string, where: string, probs: readonly number[]): void {
  let total = 0;
  for (const p of probs) {
    if (!(p >= 0 && p <= 1))
      throw new RangeError(`${fn}: reference probability ${p} at ${where} is outside [0, 1]`);
    total += p;
  }
  if (Math.abs(total - 1) > 1e-9) {
    throw new RangeError(
      `${fn}: reference probabilities at ${where} sum to ${total}; they must sum to 1`,
    );
  }
}

/**
 * Action-level soft (KL-regularised) value iteration:
 * Q(s, a) ← r(s, a) + γ·Σ P(s'|s, a)·V(s'),  V(s) = β·log Σ_a π̄(a|s)·exp(Q(s, a)/β)
 * which is max_π E_π[Q] − β·KL(π‖π̄). `reference` defaults to uniform over the state's actions.
 */
export function softActionQIteration(
  mdp: TokenMdp,
  options: SoftOptions & { reference?: ActionReference },
): ActionQTable {
  const FN = 'softActionQIteration';
  const { gamma, beta, limits } = readSoftOptions(FN, options);
  buildTries(mdp);
  const logRef = mdp.states.map((st, s) => {
    const probs = st.actions.map((_, a) =>
      options.reference ? options.reference(s, a) : 1 / st.actions.length,
    );
    if (probs.length > 0) checkDistribution(FN, `state ${s}`, probs);
    return Float64Array.from(probs, Math.log);
  });
  const all = mdp.states.map((st) => st.actions.map((_, a) => a));
  return actionSweeps(mdp, gamma, limits, (s, qs) => softmaxValue(logRef[s]!, qs, all[s]!, beta));
}

function prefixOf(trie: TokenTrie, node: number): number[] {
  const out: number[] = [];
  for (let n = node; n > 0; n = trie.parent[n]!) out.push(trie.token[n]!);
  return out.reverse();
}

/**
 * Soft BAD (paper eq. 21), solved for the optimal soft policy:
 * - inner token: Q(o, w^{1:j-1}, w^j) ← V(o, w^{1:j}) = E_π[Q(o, w^{1:j}, ·)] − β·KL(π‖π̄)(·|o, w^{1:j})
 * - last token:  Q(o, w^{1:j-1}, w^j) ← r(o, a) + γ·Σ P(o'|o, a)·V(o')
 * with V(node) = β·log Σ_w π̄(w|node)·exp(Q(node, w)/β). `reference` defaults to uniform over
 * the tokens that continue some action. Because the action-level KL is the sum of the token
 * KLs, the result equals `softActionQIteration` with the reference `productReference(mdp, reference)`.
 */
export function softBadQIteration(
  mdp: TokenMdp,
  options: SoftOptions & { reference?: TokenReference },
): SoftTokenQTable {
  const FN = 'softBadQIteration';
  const { gamma, beta, limits } = readSoftOptions(FN, options);
  const tries = buildTries(mdp);
  const logReference = tokenLogReference(FN, tries, options.reference);
  const { q, v, ...report } = tokenSweeps(mdp, tries, gamma, 1, limits, (s, qs, kids) =>
    softmaxValue(logReference[s]!, qs, kids, beta),
  );
  return { tries, q, v, beta, logReference, ...report };
}

function tokenLogReference(
  fn: string,
  tries: TokenTrie[],
  reference: TokenReference | undefined,
): Float64Array[] {
  return tries.map((trie, s) => {
    const logp = new Float64Array(trie.parent.length).fill(Number.NaN);
    trie.children.forEach((kids, n) => {
      if (kids.length === 0) return;
      const prefix = reference ? prefixOf(trie, n) : [];
      const probs = kids.map((c) =>
        reference ? reference(s, prefix, trie.token[c]!) : 1 / kids.length,
      );
      checkDistribution(fn, `state ${s}, prefix [${prefixOf(trie, n).join(', ')}]`, probs);
      kids.forEach((c, i) => {
        logp[c] = Math.log(probs[i]!);
      });
    });
    return logp;
  });
}

/**
 * The action-level reference implied by a token-level one: π̄(a|s) = Π_j π̄(w^j|s, w^{1:j-1}).
 * With it, action-level KL(π‖π̄) is the sum of the token-level KLs (the chain rule).
 */
export function productReference(mdp: TokenMdp, reference?: TokenReference): ActionReference {
  const tries = buildTries(mdp);
  const logRef = tokenLogReference('productReference', tries, reference);
  return (s, a) => {
    const trie = tries[s]!;
    let lp = 0;
    for (let n = trie.actionNode[a]!; n > 0; n = trie.parent[n]!) lp += logRef[s]![n]!;
    return Math.exp(lp);
  };
}

/** The optimal soft policy at a node: π(w|node) = π̄(w|node)·exp((Q(node, w) − V(node))/β). */
export function softTokenPolicy(
  table: SoftTokenQTable,
  s: number,
  prefix: readonly number[],
): { token: number; prob: number }[] {
  const trie = table.tries[s];
  if (!trie) throw new RangeError(`softTokenPolicy: state ${s} does not exist`);
  let node = 0;
  for (const w of prefix) {
    const c = trie.children[node]!.find((k) => trie.token[k] === w);
    if (c === undefined)
      throw new RangeError(
        `softTokenPolicy: no action of state ${s} starts with [${prefix.join(', ')}]`,
      );
    node = c;
  }
  const vs = table.v[s]![node]!;
  return trie.children[node]!.map((c) => ({
    token: trie.token[c]!,
    prob: Math.exp(table.logReference[s]![c]! + (table.q[s]![c]! - vs) / table.beta),
  }));
}
