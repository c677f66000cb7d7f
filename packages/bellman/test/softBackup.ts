// Soft backups on a token MDP's tries, written for the tests of `softBad`: the per-action
// segments it is applied to, a value iteration that uses `softBad` as its backup operator (for the
// soft-optimal policy or a fixed one), and an action-level soft policy evaluation to compare with.

import fc from 'fast-check';
import type { TokenAction, TokenMdp, TokenReference, TokenTrie } from '../src/index.js';
import { softBad } from '../src/softBad.js';
import { buildTries } from '../src/tabular/tokenMdp.js';
import { betaArb, gammaArb, tokenMdpArb } from './mdp.js';

/** π̄ favouring small token ids: weight 1/w over the tokens that continue some action. */
export function smallIdReference(mdp: TokenMdp): TokenReference {
  return (s, prefix, token) => {
    const kids = new Set<number>();
    for (const a of mdp.states[s]!.actions) {
      if (a.tokens.length > prefix.length && prefix.every((w, k) => a.tokens[k] === w)) {
        kids.add(a.tokens[prefix.length]!);
      }
    }
    let z = 0;
    for (const k of kids) z += 1 / k;
    return 1 / token / z;
  };
}

/** log π̄ of the token leading into each trie node (NaN at the root); uniform when no reference. */
export function logReferenceOf(
  tries: readonly TokenTrie[],
  reference?: TokenReference,
): Float64Array[] {
  return tries.map((trie, s) => {
    const logp = new Float64Array(trie.parent.length).fill(Number.NaN);
    trie.children.forEach((kids, n) => {
      for (const c of kids) {
        logp[c] = Math.log(
          reference ? reference(s, pathTokens(trie, n), trie.token[c]!) : 1 / kids.length,
        );
      }
    });
    return logp;
  });
}

function pathTokens(trie: TokenTrie, node: number): number[] {
  const out: number[] = [];
  for (let n = node; n > 0; n = trie.parent[n]!) out.push(trie.token[n]!);
  return out.reverse();
}

/** The nodes an action walks through: `path[j]` is the node after j tokens (`path[0]` = root). */
export function actionPath(trie: TokenTrie, action: number): number[] {
  const path: number[] = [];
  for (let n = trie.actionNode[action]!; n > 0; n = trie.parent[n]!) path.push(n);
  path.push(0);
  return path.reverse();
}

/**
 * A case for a fixed token policy: a random token MDP, one weight in [0.05, 1] per node of its
 * tries (all states' nodes in order, for {@link weightedTokenPolicy}), γ, β, and whether the
 * reference is {@link smallIdReference} (`skewed`) or uniform.
 */
export function fixedPolicyCaseArb() {
  return tokenMdpArb().chain((mdp) => {
    const nodes = buildTries(mdp).reduce((acc, t) => acc + t.parent.length, 0);
    return fc.record({
      mdp: fc.constant(mdp),
      weights: fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), {
        minLength: nodes,
        maxLength: nodes,
      }),
      gamma: gammaArb,
      beta: betaArb,
      skewed: fc.boolean(),
    });
  });
}

/**
 * The token policy π(w|n) ∝ the weight of the child node w leads into: log π of the token leading
 * into each node of each trie (NaN at the root), `weights` as {@link fixedPolicyCaseArb} lays
 * them out.
 */
export function weightedTokenPolicy(
  tries: readonly TokenTrie[],
  weights: readonly number[],
): Float64Array[] {
  let offset = 0;
  return tries.map((trie) => {
    const lp = new Float64Array(trie.parent.length).fill(Number.NaN);
    trie.children.forEach((kids) => {
      const z = kids.reduce((acc, c) => acc + weights[offset + c]!, 0);
      for (const c of kids) lp[c] = Math.log(weights[offset + c]! / z);
    });
    offset += trie.parent.length;
    return lp;
  });
}

/** What can follow an action: each listed next state, plus the episode's end (state −1). */
export function outcomes(action: TokenAction): { state: number; prob: number }[] {
  const out = action.next.map((n) => ({ state: n.state, prob: n.prob }));
  const ended = 1 - out.reduce((acc, n) => acc + n.prob, 0);
  if (ended > 0) out.push({ state: -1, prob: ended });
  return out;
}

/**
 * The one-action segment of taking `action` at the node path `path` with soft values `v` on that
 * state's trie, followed by `outcome` (next state, or −1 for the end of the episode), whose first
 * token's soft value is `rootValue(next)`.
 */
export function actionSegment(
  action: TokenAction,
  path: readonly number[],
  v: Float64Array,
  outcome: number,
  rootValue: (state: number) => number,
) {
  const n = action.tokens.length;
  return {
    rewards: [action.reward],
    dones: [outcome < 0],
    tokenCounts: [n],
    values: path.slice(0, n).map((node) => v[node]!),
    bootstrapValue: outcome < 0 ? Number.NaN : rootValue(outcome),
  };
}

export interface SoftBadIteration {
  tries: TokenTrie[];
  /** Q of the token leading into each node (NaN at the root). */
  q: Float64Array[];
  /** Soft value of each inner node (0 at a terminal state's root, NaN at an action's end). */
  v: Float64Array[];
  sweeps: number;
  converged: boolean;
}

/**
 * Value iteration whose backup is `softBad`. Each sweep:
 * 1. soft values from the current Q: V(n) = Σ_w π(w|n)·[Q(n, w) − β·log(π(w|n)/π̄(w|n))], with π
 *    either the fixed `logPolicy` or, without one, the soft-greedy π ∝ π̄·exp(Q/β);
 * 2. every token's new Q is the expected `softBad` target of its action's segment, the
 *    expectation taken over the action's outcomes with their probabilities.
 */
export function iterateSoftBad(
  mdp: TokenMdp,
  options: {
    gamma: number;
    beta: number;
    logReference: readonly Float64Array[];
    logPolicy?: readonly Float64Array[];
    tolerance?: number;
    maxSweeps?: number;
  },
): SoftBadIteration {
  const { gamma, beta, logReference, logPolicy } = options;
  const tolerance = options.tolerance ?? 1e-13;
  const maxSweeps = options.maxSweeps ?? 100_000;
  const tries = buildTries(mdp);
  // Q starts at 0 on every token (NaN at the roots, which no token leads into).
  const q = tries.map((t) => new Float64Array(t.parent.length).fill(Number.NaN, 0, 1));
  const v = tries.map((t) => new Float64Array(t.parent.length).fill(Number.NaN));
  const paths = tries.map((trie, s) => mdp.states[s]!.actions.map((_, a) => actionPath(trie, a)));
  const rootValue = (s: number) => v[s]![0]!;
  let sweeps = 0;
  let change = Number.POSITIVE_INFINITY;
  while (sweeps < maxSweeps && change > tolerance) {
    sweeps++;
    tries.forEach((trie, s) => {
      trie.children.forEach((kids, n) => {
        if (kids.length === 0) {
          v[s]![n] = n === 0 ? 0 : Number.NaN;
          return;
        }
        const logPi = logPolicy
          ? kids.map((c) => logPolicy[s]![c]!)
          : softGreedyLogPolicy(kids, q[s]!, logReference[s]!, beta);
        let value = 0;
        kids.forEach((c, i) => {
          const lp = logPi[i]!;
          if (lp === Number.NEGATIVE_INFINITY) return;
          value += Math.exp(lp) * (q[s]![c]! - beta * (lp - logReference[s]![c]!));
        });
        v[s]![n] = value;
      });
    });
    change = 0;
    mdp.states.forEach((st, s) => {
      st.actions.forEach((action, a) => {
        const path = paths[s]![a]!;
        const next = new Float64Array(action.tokens.length);
        for (const o of outcomes(action)) {
          const y = softBad(actionSegment(action, path, v[s]!, o.state, rootValue), { gamma });
          for (let j = 0; j < y.length; j++) next[j]! += o.prob * y[j]!;
        }
        next.forEach((y, j) => {
          const node = path[j + 1]!;
          change = Math.max(change, Math.abs(y - q[s]![node]!));
          q[s]![node] = y;
        });
      });
    });
  }
  return { tries, q, v, sweeps, converged: change <= tolerance };
}

/** log π(w|n) for π ∝ π̄·exp(Q/β) over `kids`, computed stably. */
function softGreedyLogPolicy(
  kids: readonly number[],
  q: Float64Array,
  logReference: Float64Array,
  beta: number,
): number[] {
  const z = kids.map((c) => logReference[c]! + q[c]! / beta);
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((acc, x) => acc + Math.exp(x - m), 0));
  return z.map((x) => x - lse);
}

/**
 * Action-level soft policy evaluation: Q(s, a) = r + γ·Σ P(s'|s, a)·V(s') and
 * V(s) = Σ_a π(a|s)·[Q(s, a) − β·log(π(a|s)/π̄(a|s))], iterated to its fixed point.
 */
export function softActionEvaluation(
  mdp: TokenMdp,
  options: {
    gamma: number;
    beta: number;
    logPolicy: (s: number, a: number) => number;
    logReference: (s: number, a: number) => number;
    tolerance?: number;
  },
): { q: Float64Array[]; v: Float64Array; converged: boolean } {
  const { gamma, beta, logPolicy, logReference } = options;
  const tolerance = options.tolerance ?? 1e-13;
  const S = mdp.states.length;
  const q = mdp.states.map((st) => new Float64Array(st.actions.length));
  let v = new Float64Array(S);
  let change = Number.POSITIVE_INFINITY;
  for (let sweep = 0; sweep < 100_000 && change > tolerance; sweep++) {
    const next = new Float64Array(S);
    change = 0;
    mdp.states.forEach((st, s) => {
      st.actions.forEach((a, i) => {
        let e = 0;
        for (const n of a.next) e += n.prob * v[n.state]!;
        q[s]![i] = a.reward + gamma * e;
        const lp = logPolicy(s, i);
        // An action of probability 0 adds nothing (0·log 0 = 0).
        if (lp === Number.NEGATIVE_INFINITY) return;
        next[s]! += Math.exp(lp) * (q[s]![i]! - beta * (lp - logReference(s, i)));
      });
      change = Math.max(change, Math.abs(next[s]! - v[s]!));
    });
    v = next;
  }
  return { q, v, converged: change <= tolerance };
}
