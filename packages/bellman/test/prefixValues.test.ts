// Exact token-prefix values (`prefixValues`, `optimalPrefixValues`, `softPrefixValues`) against
// hand-computed cases, the token-level backups on the label tree, and the martingale property of
// the BAD decomposition.
import { expectNear } from '@poad/dev-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TokenMdp } from '../src/index.js';
import {
  actionQIteration,
  badQIteration,
  labelLogReference,
  optimalPrefixValues,
  prefixValues,
  productReference,
  softActionQIteration,
  softBadQIteration,
  softPolicyEvaluation,
  softPrefixValues,
} from '../src/index.js';
import { buildTries } from '../src/tabular/tokenMdp.js';
import { betaArb, gammaArb, tokenMdpArb } from './mdp.js';
import {
  actionPath,
  fixedPolicyCaseArb,
  iterateSoftBad,
  logReferenceOf,
  smallIdReference,
  weightedTokenPolicy,
} from './softBackup.js';

const RUNS = { numRuns: 200 };

describe('prefixValues and optimalPrefixValues by hand', () => {
  // Three labels; A and B share their first two tokens, C parts from them at once.
  //   A = [5, 7, 9]  π = 0.5  Q = 1
  //   B = [5, 7, 4]  π = 0.3  Q = 0.2
  //   C = [6, 1]     π = 0.2  Q = −0.5
  const ids = [Int32Array.of(5, 7, 9), Int32Array.of(5, 7, 4), Int32Array.of(6, 1)];
  const pi = [0.5, 0.3, 0.2];
  const q = [1, 0.2, -0.5];

  it('V^π before each token is the π-weighted mean of Q over the labels still possible', () => {
    // k = 0, every label: 0.5·1 + 0.3·0.2 + 0.2·(−0.5) = 0.5 + 0.06 − 0.1 = 0.46.
    // A and B, k = 1 (after [5]) and k = 2 (after [5, 7]): {A, B}, (0.5 + 0.06)/0.8 = 0.7.
    // After the last token: Q of the label itself.
    const a = Array.from(prefixValues(ids, pi, q, 0));
    const b = Array.from(prefixValues(ids, pi, q, 1));
    expect(a).toHaveLength(4);
    [0.46, 0.7, 0.7, 1].forEach((x, k) => {
      expect(a[k]).toBeCloseTo(x, 14);
    });
    [0.46, 0.7, 0.7, 0.2].forEach((x, k) => {
      expect(b[k]).toBeCloseTo(x, 14);
    });
    // C: after [6] only C is left, so its value is Q(C) = −0.5 already.
    const c = Array.from(prefixValues(ids, pi, q, 2));
    expect(c).toHaveLength(3);
    [0.46, -0.5, -0.5].forEach((x, k) => {
      expect(c[k]).toBeCloseTo(x, 14);
    });
    // Only ratios of π matter: the same weights scaled give the same values.
    prefixValues(ids, [5, 3, 2], q, 0).forEach((x, k) => {
      expectNear(x, a[k]!, 1e-15);
    });
  });

  it('V* before each token is the best Q over the labels still possible', () => {
    expect(Array.from(optimalPrefixValues(ids, q, 0))).toEqual([1, 1, 1, 1]);
    expect(Array.from(optimalPrefixValues(ids, q, 1))).toEqual([1, 1, 1, 0.2]);
    expect(Array.from(optimalPrefixValues(ids, q, 2))).toEqual([1, -0.5, -0.5]);
  });

  it('a label that ended is not among the labels of a longer prefix', () => {
    // P = [5, 7] is a prefix of A = [5, 7, 9]. Before A's third token (after [5, 7]) P has
    // ended, so only A remains: A's values are [V, V_{5}, Q(A), Q(A)] with V_{5} over {A, P}.
    //   π = (A 0.6, P 0.4), Q = (A 1, P 0): V = 0.6; after [5]: both still write a token, 0.6.
    const pids = [Int32Array.of(5, 7, 9), Int32Array.of(5, 7)];
    expect(Array.from(prefixValues(pids, [0.6, 0.4], [1, 0], 0))).toEqual([0.6, 0.6, 1, 1]);
    expect(Array.from(prefixValues(pids, [0.6, 0.4], [1, 0], 1))).toEqual([0.6, 0.6, 0]);
    expect(Array.from(optimalPrefixValues(pids, [0, 1], 0))).toEqual([1, 1, 0, 0]);
    // Two labels with the same ids (possible under the TWOSOME sampler): both count everywhere.
    const same = [Int32Array.of(3, 4), Int32Array.of(3, 4)];
    expect(Array.from(prefixValues(same, [0.25, 0.75], [1, 0], 0))).toEqual([0.25, 0.25, 1]);
  });

  it('a prefix of probability 0 has no value (NaN); any positive mass defines it', () => {
    // C has π = 0: after [6] no label of positive probability is left.
    const v = prefixValues(ids, [0.5, 0.5, 0], q, 2);
    expect(v[0]).toBeCloseTo(0.6, 14);
    expect(v[1]).toBeNaN();
    expect(v[2]).toBe(-0.5);
    // B has π = 0 but shares [5, 7] with A: those prefixes are A's, Q(A) = 1.
    expect(Array.from(prefixValues(ids, [0.5, 0, 0.5], q, 1))).toEqual([0.25, 1, 1, 0.2]);
  });

  it('single-token labels: one prefix, the state value, then Q', () => {
    const one = [[1], [2], [3]];
    const v = prefixValues(one, [0.2, 0.3, 0.5], [1, 2, 3], 1);
    expect(v).toHaveLength(2);
    expect(v[0]).toBeCloseTo(0.2 + 0.6 + 1.5, 14);
    expect(v[1]).toBe(2);
  });

  it('refuses malformed input, naming the argument', () => {
    expect(() => prefixValues([], [], [], 0)).toThrow(/`labelIds` must be a non-empty array/);
    expect(() => prefixValues([[]], [1], [0], 0)).toThrow(/`labelIds\[0\]` is empty/);
    expect(() => prefixValues([[1.5]], [1], [0], 0)).toThrow(
      /`labelIds\[0\]\[0\]` must be an integer/,
    );
    expect(() => prefixValues(ids, [0.5, 0.5], q, 0)).toThrow(
      /`probs` has length 2 but must have length 3: one probability per label/,
    );
    expect(() => prefixValues(ids, [0.5, -0.1, 0.6], q, 0)).toThrow(/`probs\[1\]` is -0.1/);
    expect(() => prefixValues(ids, [0, 0, 0], q, 0)).toThrow(/`probs` are all 0/);
    expect(() => prefixValues(ids, pi, [1, Number.NaN, 0], 0)).toThrow(
      /`q\[1\]` must be a finite number/,
    );
    expect(() => prefixValues(ids, pi, q, 3)).toThrow(
      /`chosen` must be the index of a label in 0..2/,
    );
    expect(() => optimalPrefixValues(ids, q, -1)).toThrow(RangeError);
  });
});

describe('softPrefixValues by hand: two steps', () => {
  // s0: X = [1, 2] → s1 (reward 0), Y = [1, 3] → end (0.5), Z = [4] → end (0).
  // s1: U = [7] → end (1), W = [8, 9] → end (0).
  // γ = 0.9, β = 0.5, π̄ uniform over each prefix's continuations, so π̄(U) = π̄(W) = 1/2 and
  // π̄(X) = π̄(Y) = 1/4, π̄(Z) = 1/2. π(s0) = (0.5, 0.25, 0.25), π(s1) = (0.8, 0.2).
  const mdp: TokenMdp = {
    states: [
      {
        actions: [
          { tokens: [1, 2], reward: 0, next: [{ state: 1, prob: 1 }] },
          { tokens: [1, 3], reward: 0.5, next: [] },
          { tokens: [4], reward: 0, next: [] },
        ],
      },
      {
        actions: [
          { tokens: [7], reward: 1, next: [] },
          { tokens: [8, 9], reward: 0, next: [] },
        ],
      },
    ],
  };
  const pi = [
    [0.5, 0.25, 0.25],
    [0.8, 0.2],
  ];
  const ids = mdp.states.map((st) => st.actions.map((a) => a.tokens));
  const beta = 0.5;
  // V(s1) = 0.8·(1 − 0.5·ln(0.8/0.5)) + 0.2·(0 − 0.5·ln(0.2/0.5))
  //       = 0.8 − 0.4·ln 1.6 − 0.1·ln 0.4 = 0.8 − 0.188001452 + 0.091629073 = 0.703627621
  const v1 = 0.8 - 0.4 * Math.log(1.6) - 0.1 * Math.log(0.4);
  // Q(s0, X) = 0 + 0.9·V(s1) = 0.633264859
  const qx = 0.9 * v1;
  // V(s0) = 0.5·(Q_X − 0.5·ln(0.5/0.25)) + 0.25·(0.5 − 0.5·ln 1) + 0.25·(0 − 0.5·ln(0.25/0.5))
  //       = 0.5·Q_X + 0.125 − 0.125·ln 2 = 0.316632430 + 0.125 − 0.086643398 = 0.354989032
  const v0 = 0.5 * qx + 0.125 - 0.125 * Math.log(2);
  // After [1]: X and Y remain with π = (2/3, 1/3), π̄ = (1/2, 1/2):
  //   2/3·(Q_X − 0.5·ln(4/3)) + 1/3·(0.5 − 0.5·ln(2/3)) = 0.326282549 + 0.234244185 = 0.560526733
  const v01 = (2 / 3) * (qx - 0.5 * Math.log(4 / 3)) + (1 / 3) * (0.5 - 0.5 * Math.log(2 / 3));

  it('the soft evaluation gives the hand values of Q_soft and V_soft', () => {
    const ev = softPolicyEvaluation(mdp, {
      gamma: 0.9,
      beta,
      policy: (s, a) => pi[s]![a]!,
      reference: productReference(mdp),
    });
    expect(ev.converged).toBe(true);
    expect(v1).toBeCloseTo(0.703627621, 8);
    expect(v0).toBeCloseTo(0.354989032, 8);
    expectNear(ev.v[1]!, v1, 1e-12);
    expectNear(ev.v[0]!, v0, 1e-12);
    expect(Array.from(ev.q[1]!)).toEqual([1, 0]);
    expectNear(ev.q[0]![0]!, qx, 1e-12);
  });

  it('the soft value at every prefix, and Q_soft after the last token', () => {
    const q0 = [qx, 0.5, 0];
    const q1 = [1, 0];
    const x = softPrefixValues(ids[0]!, pi[0]!, q0, 0, { beta });
    expect(x).toHaveLength(3);
    expectNear(x[0]!, v0, 1e-14);
    expect(v01).toBeCloseTo(0.560526733, 8);
    expectNear(x[1]!, v01, 1e-14);
    expect(x[2]).toBe(qx);
    const y = softPrefixValues(ids[0]!, pi[0]!, q0, 1, { beta });
    expect([y[1], y[2]]).toEqual([x[1], 0.5]);
    expect(Array.from(softPrefixValues(ids[0]!, pi[0]!, q0, 2, { beta }))).toEqual([x[0], 0]);
    // W: after [8] only W remains and its one continuation has π = π̄ = 1: value Q(W) = 0.
    const w = softPrefixValues(ids[1]!, pi[1]!, q1, 1, { beta });
    expectNear(w[0]!, v1, 1e-14);
    expect([w[1], w[2]]).toEqual([0, 0]);
    // The token-level soft value at the root of s0: first tokens 1 (π = 0.75, π̄ = 0.5) and
    // 4 (π = 0.25, π̄ = 0.5): 0.75·(V_[1] − 0.5·ln 1.5) + 0.25·(0 − 0.5·ln 0.5) = V(s0).
    expectNear(0.75 * (v01 - 0.5 * Math.log(1.5)) + 0.25 * (0 - 0.5 * Math.log(0.5)), v0, 1e-14);
    // β = 0 is the plain policy value: after [1], (0.5·Q_X + 0.25·0.5)/0.75.
    const hard = prefixValues(ids[0]!, pi[0]!, q0, 0);
    softPrefixValues(ids[0]!, pi[0]!, q0, 0, { beta: 0 }).forEach((x, k) => {
      expectNear(x, hard[k]!, 1e-15);
    });
    expectNear(hard[1]!, (0.5 * qx + 0.125) / 0.75, 1e-15);
  });

  it('a reference of our own: the product log π̄ and the KL against it', () => {
    // π̄ after the root: token 1 with 0.8, token 4 with 0.2; after [1]: 2 with 0.5, 3 with 0.5.
    const ref = [[Math.log(0.8), Math.log(0.5)], [Math.log(0.8), Math.log(0.5)], [Math.log(0.2)]];
    const lr = labelLogReference(ids[0]!, ref);
    [0.4, 0.4, 0.2].forEach((p, a) => {
      expectNear(lr[a]!, Math.log(p), 1e-14);
    });
    const q0 = [qx, 0.5, 0];
    // V(s0) = Σ π·(Q − β·ln(π/π̄)) with π̄ = (0.4, 0.4, 0.2).
    const want =
      0.5 * (qx - beta * Math.log(0.5 / 0.4)) +
      0.25 * (0.5 - beta * Math.log(0.25 / 0.4)) +
      0.25 * (0 - beta * Math.log(0.25 / 0.2));
    expectNear(
      softPrefixValues(ids[0]!, pi[0]!, q0, 2, { beta, referenceLogProbs: ref })[0]!,
      want,
      1e-14,
    );
  });

  it('refuses labels that are not a tree and references that are not distributions', () => {
    const q = [0, 0];
    expect(() =>
      softPrefixValues(
        [
          [1, 2],
          [1, 2],
        ],
        [0.5, 0.5],
        q,
        0,
        { beta },
      ),
    ).toThrow(/`labelIds\[0\]` and `labelIds\[1\]` are the same token ids/);
    expect(() => softPrefixValues([[1], [1, 2]], [0.5, 0.5], q, 0, { beta })).toThrow(
      /`labelIds\[0\]` is a prefix of `labelIds\[1\]`/,
    );
    expect(() =>
      softPrefixValues([[1], [2]], [0.5, 0.5], q, 0, {
        beta,
        referenceLogProbs: [[Math.log(0.5)], [Math.log(0.4)]],
      }),
    ).toThrow(/continuing prefix \[\] sum to 0\.9/);
    expect(() =>
      softPrefixValues([[1], [2]], [0.5, 0.5], q, 0, { beta, referenceLogProbs: [[0]] }),
    ).toThrow(/one array of token log-probs per label/);
    expect(() => softPrefixValues([[1], [2]], [0.5, 0.5], q, 0, { beta: -1 })).toThrow(
      /`options.beta` must be a finite number ≥ 0/,
    );
  });
});

/** Random labels over a tiny vocabulary (shared prefixes, prefix labels and repeats happen). */
const labelsArb = fc
  .array(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }), {
    minLength: 1,
    maxLength: 6,
  })
  .chain((ids) =>
    fc.record({
      ids: fc.constant(ids),
      // Some labels get probability 0.
      pi: fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 1, noNaN: true })), {
        minLength: ids.length,
        maxLength: ids.length,
      }),
      q: fc.array(fc.double({ min: -2, max: 2, noNaN: true }), {
        minLength: ids.length,
        maxLength: ids.length,
      }),
    }),
  )
  .filter(({ pi }) => pi.some((p) => p > 0));

describe('properties of the exact prefix values', () => {
  it('entry 0 is Σ π·Q / Σ π, the last entry is the label’s Q, and each prefix is the π-weighted mean of what follows it (the BAD martingale)', () => {
    fc.assert(
      fc.property(labelsArb, ({ ids, pi, q }) => {
        const total = pi.reduce((s, p) => s + p, 0);
        const root = pi.reduce((s, p, a) => s + p * q[a]!, 0) / total;
        const all = ids.map((_, c) => prefixValues(ids, pi, q, c));
        ids.forEach((own, c) => {
          const v = all[c]!;
          expect(v).toHaveLength(own.length + 1);
          expectNear(v[0]!, root, 1e-12);
          expect(v[own.length]).toBe(q[c]);
          for (let k = 0; k < own.length; k++) {
            // The labels that still write token k after own[<k], and what each is worth one token
            // later: its Q if that token ends it, else the value of its next prefix.
            // Labels of probability 0 carry no weight (their own later prefixes may be NaN).
            const members = ids.flatMap((t, a) =>
              pi[a]! > 0 && t.length > k && own.slice(0, k).every((w, j) => t[j] === w) ? [a] : [],
            );
            const mass = members.reduce((s, a) => s + pi[a]!, 0);
            if (mass === 0) {
              expect(v[k]).toBeNaN();
              continue;
            }
            const next = members.reduce((s, a) => s + pi[a]! * all[a]![k + 1]!, 0) / mass;
            expectNear(v[k]!, next, 1e-12);
            // Grouped by the next token v: Σ_v π(v | w_<k)·W(v) with W(v) the mean of the same.
            const byToken = new Map<number, number[]>();
            for (const a of members)
              byToken.set(ids[a]![k]!, [...(byToken.get(ids[a]![k]!) ?? []), a]);
            let grouped = 0;
            for (const group of byToken.values()) {
              const m = group.reduce((s, a) => s + pi[a]!, 0);
              const w = group.reduce((s, a) => s + pi[a]! * all[a]![k + 1]!, 0) / m;
              grouped += (m / mass) * w;
            }
            expectNear(v[k]!, grouped, 1e-12);
          }
        });
      }),
      RUNS,
    );
  });

  it('V* before a token is at least V^π there, and equal to the best completion', () => {
    fc.assert(
      fc.property(labelsArb, ({ ids, pi, q }) => {
        ids.forEach((own, c) => {
          const star = optimalPrefixValues(ids, q, c);
          const v = prefixValues(ids, pi, q, c);
          for (let k = 0; k <= own.length; k++) {
            if (!Number.isNaN(v[k]!)) expect(star[k]!).toBeGreaterThanOrEqual(v[k]! - 1e-12);
          }
          const best = Math.max(...q);
          expect(star[0]).toBe(best);
        });
      }),
      RUNS,
    );
  });

  it('on prefix-free labels, V* is the BAD fixed point of badQIteration at every node the label passes', () => {
    fc.assert(
      fc.property(tokenMdpArb(), fc.double({ min: 0, max: 0.95, noNaN: true }), (mdp, gamma) => {
        const star = actionQIteration(mdp, { gamma });
        const bad = badQIteration(mdp, { gamma });
        mdp.states.forEach((st, s) => {
          if (st.actions.length === 0) return;
          const ids = st.actions.map((a) => a.tokens);
          st.actions.forEach((act, a) => {
            const v = optimalPrefixValues(ids, star.q[s]!, a);
            const path = actionPath(bad.tries[s]!, a);
            for (let k = 0; k < act.tokens.length; k++) expectNear(v[k]!, bad.v[s]![path[k]!]!);
            expectNear(v[act.tokens.length]!, bad.q[s]![path[act.tokens.length]!]!);
          });
        });
      }),
      RUNS,
    );
  });
});

describe('soft prefix values against the token-level soft backups', () => {
  /** Per-label token log-probs of a token reference (uniform when none). */
  function labelReference(mdp: TokenMdp, skewed: boolean) {
    const reference = skewed ? smallIdReference(mdp) : undefined;
    const tries = buildTries(mdp);
    const logRef = logReferenceOf(tries, reference);
    const perLabel = mdp.states.map((st, s) =>
      st.actions.map((_, a) =>
        actionPath(tries[s]!, a)
          .slice(1)
          .map((node) => logRef[s]![node]!),
      ),
    );
    return { reference, tries, logRef, perLabel };
  }

  it('at the soft-optimal policy, they are softBadQIteration’s values at every node the label passes', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, fc.boolean(), (mdp, gamma, beta, skewed) => {
        const { reference, perLabel } = labelReference(mdp, skewed);
        const table = softBadQIteration(mdp, { gamma, beta, reference });
        const actionReference = productReference(mdp, reference);
        const opt = softActionQIteration(mdp, { gamma, beta, reference: actionReference });
        expect(table.converged && opt.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          if (st.actions.length === 0) return;
          const ids = st.actions.map((a) => a.tokens);
          // π*(a|s) = π̄(a|s)·exp((Q*(s, a) − V*(s))/β)
          const lr = labelLogReference(ids, perLabel[s]);
          const star = st.actions.map((_, a) =>
            Math.exp(lr[a]! + (opt.q[s]![a]! - opt.v[s]!) / beta),
          );
          st.actions.forEach((act, a) => {
            const v = softPrefixValues(ids, star, opt.q[s]!, a, {
              beta,
              referenceLogProbs: perLabel[s],
            });
            const path = actionPath(table.tries[s]!, a);
            for (let k = 0; k < act.tokens.length; k++)
              expectNear(v[k]!, table.v[s]![path[k]!]!, 1e-8);
            expectNear(v[act.tokens.length]!, table.q[s]![path[act.tokens.length]!]!, 1e-8);
          });
        });
      }),
      RUNS,
    );
  });

  it('for any fixed token policy, they are the values of a value iteration with the soft-BAD backup, and entry 0 is softPolicyEvaluation’s V', () => {
    fc.assert(
      fc.property(fixedPolicyCaseArb(), ({ mdp, weights, gamma, beta, skewed }) => {
        const { reference, tries, logRef, perLabel } = labelReference(mdp, skewed);
        // π(w|n) ∝ the random weight of the child node; π(a|s) is the product along a's path.
        const logPolicy = weightedTokenPolicy(tries, weights);
        const actionProb = (s: number, a: number) =>
          Math.exp(
            actionPath(tries[s]!, a)
              .slice(1)
              .reduce((acc, node) => acc + logPolicy[s]![node]!, 0),
          );
        const it = iterateSoftBad(mdp, { gamma, beta, logReference: logRef, logPolicy });
        const ev = softPolicyEvaluation(mdp, {
          gamma,
          beta,
          policy: actionProb,
          reference: productReference(mdp, reference),
        });
        expect(it.converged && ev.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          if (st.actions.length === 0) return;
          const ids = st.actions.map((a) => a.tokens);
          const probs = st.actions.map((_, a) => actionProb(s, a));
          st.actions.forEach((act, a) => {
            const v = softPrefixValues(ids, probs, ev.q[s]!, a, {
              beta,
              referenceLogProbs: perLabel[s],
            });
            expectNear(v[0]!, ev.v[s]!, 1e-8);
            const path = actionPath(tries[s]!, a);
            for (let k = 0; k < act.tokens.length; k++)
              expectNear(v[k]!, it.v[s]![path[k]!]!, 1e-8);
            expectNear(v[act.tokens.length]!, it.q[s]![path[act.tokens.length]!]!, 1e-8);
          });
        });
      }),
      RUNS,
    );
  });
});
