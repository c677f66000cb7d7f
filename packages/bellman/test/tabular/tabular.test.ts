import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TokenMdp } from '../../src/index.js';
import {
  actionQIteration,
  badQIteration,
  greedyTokenDecode,
  ntpoDiscrepancy,
  ntpoQIteration,
  productReference,
  softActionQIteration,
  softBadQIteration,
  softTokenPolicy,
  TokenMdpError,
  tokenQ,
} from '../../src/index.js';
import { betaArb, gammaArb, lengthen, tokenMdpArb } from '../mdp.js';

const RUNS = { numRuns: 200 };

describe('BAD keeps the action-level optimum (paper eq. 13 vs eq. 4)', () => {
  it('BAD Q at each action’s last token equals action-level Q* (1e-9)', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, (mdp, gamma) => {
        const star = actionQIteration(mdp, { gamma });
        const bad = badQIteration(mdp, { gamma });
        expect(star.converged && bad.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          expect(Math.abs(bad.v[s]![0]! - star.v[s]!)).toBeLessThan(1e-9);
          st.actions.forEach((a, i) => {
            expect(Math.abs(tokenQ(bad, s, a.tokens) - star.q[s]![i]!)).toBeLessThan(1e-9);
          });
        });
      }),
      RUNS,
    );
  });

  it('greedy token-by-token decoding under BAD picks an action-level optimal action', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, (mdp, gamma) => {
        const star = actionQIteration(mdp, { gamma });
        const bad = badQIteration(mdp, { gamma });
        mdp.states.forEach((st, s) => {
          if (st.actions.length === 0) return;
          const { action, tokens } = greedyTokenDecode(bad, s);
          expect(tokens).toEqual(st.actions[action]!.tokens);
          expect(star.q[s]![action]!).toBeGreaterThanOrEqual(star.v[s]! - 1e-9);
        });
      }),
      RUNS,
    );
  });

  it('every inner BAD token value is the best completion below it', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, (mdp, gamma) => {
        const star = actionQIteration(mdp, { gamma });
        const bad = badQIteration(mdp, { gamma });
        mdp.states.forEach((st, s) => {
          st.actions.forEach((a) => {
            for (let j = 1; j <= a.tokens.length; j++) {
              const prefix = a.tokens.slice(0, j);
              let best = Number.NEGATIVE_INFINITY;
              st.actions.forEach((b, i) => {
                if (prefix.every((w, k) => b.tokens[k] === w))
                  best = Math.max(best, star.q[s]![i]!);
              });
              expect(Math.abs(tokenQ(bad, s, prefix) - best)).toBeLessThan(1e-9);
            }
          });
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe('NTPO with γ_w < 1 breaks action-level optimality (paper eq. 11–12)', () => {
  /** One state: a long action worth 1, a one-token action worth c; both end the episode. */
  const twoActions = (length: number, c: number): TokenMdp => ({
    states: [
      {
        actions: [
          { tokens: Array.from({ length }, (_, i) => 10 + i), reward: 1, next: [] },
          { tokens: [1], reward: c, next: [] },
        ],
      },
    ],
  });

  it('greedy NTPO decoding prefers a worse short action when γ_w^(|a|-1) shrinks the long one', () => {
    const mdp = twoActions(5, 0.9);
    const d = ntpoDiscrepancy(mdp, { gamma: 0.95, intraGamma: 0.9 });
    expect(d.suboptimalStates).toEqual([0]);
    expect(d.regret[0]!).toBeCloseTo(0.1, 12);
    expect(d.maxValueGap).toBeCloseTo(0.1, 12);
    // BAD (γ_w = 1) on the same MDP has no discrepancy.
    const bad = ntpoDiscrepancy(mdp, { gamma: 0.95, intraGamma: 1 });
    expect(bad.suboptimalStates).toEqual([]);
    expect(bad.maxValueGap).toBeLessThan(1e-12);
  });

  it('the discrepancy grows with action length', () => {
    const gaps = [1, 2, 3, 4, 6, 8].map(
      (L) => ntpoDiscrepancy(twoActions(L, 0), { gamma: 0.95, intraGamma: 0.9 }).maxValueGap,
    );
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!);
    expect(gaps[0]!).toBeLessThan(1e-12); // one-token actions: no gap
    expect(gaps[3]!).toBeCloseTo(1 - 0.9 ** 3, 12);
  });

  it('on random MDPs with non-negative rewards, lengthening every action never shrinks the gap', () => {
    fc.assert(
      fc.property(
        tokenMdpArb({ minReward: 0 }),
        gammaArb,
        fc.double({ min: 0.5, max: 0.99, noNaN: true }),
        (mdp, gamma, intraGamma) => {
          let prev = ntpoDiscrepancy(mdp, { gamma, intraGamma }).maxValueGap;
          for (const extra of [[7], [7, 8], [7, 8, 9]]) {
            const gap = ntpoDiscrepancy(lengthen(mdp, extra), { gamma, intraGamma }).maxValueGap;
            expect(gap).toBeGreaterThanOrEqual(prev - 1e-12);
            prev = gap;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('NTPO Q at the last token of a single-path action is exact, the first token is discounted by γ_w^(|a|-1)', () => {
    const mdp = twoActions(4, 0.2);
    const q = ntpoQIteration(mdp, { gamma: 0.9, intraGamma: 0.8 });
    expect(tokenQ(q, 0, [10, 11, 12, 13])).toBeCloseTo(1, 12);
    expect(tokenQ(q, 0, [10])).toBeCloseTo(0.8 ** 3, 12);
  });
});

describe('soft BAD (paper eq. 21)', () => {
  it('equals action-level soft values when the action-level KL is the sum of token KLs', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, (mdp, gamma, beta) => {
        const soft = softBadQIteration(mdp, { gamma, beta });
        const act = softActionQIteration(mdp, { gamma, beta, reference: productReference(mdp) });
        mdp.states.forEach((st, s) => {
          expect(Math.abs(soft.v[s]![0]! - act.v[s]!)).toBeLessThan(
            1e-9 * Math.max(1, Math.abs(act.v[s]!)),
          );
          st.actions.forEach((a, i) => {
            expect(Math.abs(tokenQ(soft, s, a.tokens) - act.q[s]![i]!)).toBeLessThan(1e-9);
          });
        });
      }),
      RUNS,
    );
  });

  it('also holds for a non-uniform token reference policy', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, (mdp, gamma, beta) => {
        // π̄ favours small token ids at every node: weight 1/w, normalised over the children.
        const reference = (s: number, prefix: readonly number[], token: number) => {
          const kids = new Set<number>();
          for (const a of mdp.states[s]!.actions) {
            if (prefix.every((w, k) => a.tokens[k] === w) && a.tokens.length > prefix.length) {
              kids.add(a.tokens[prefix.length]!);
            }
          }
          let z = 0;
          for (const k of kids) z += 1 / k;
          return 1 / token / z;
        };
        const soft = softBadQIteration(mdp, { gamma, beta, reference });
        const act = softActionQIteration(mdp, {
          gamma,
          beta,
          reference: productReference(mdp, reference),
        });
        mdp.states.forEach((_, s) => {
          expect(Math.abs(soft.v[s]![0]! - act.v[s]!)).toBeLessThan(
            1e-9 * Math.max(1, Math.abs(act.v[s]!)),
          );
        });
      }),
      { numRuns: 200 },
    );
  });

  it('the soft policy at each node is a distribution, and β → 0 approaches the hard optimum', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, (mdp, gamma) => {
        const soft = softBadQIteration(mdp, { gamma, beta: 1e-3 });
        const hard = badQIteration(mdp, { gamma });
        mdp.states.forEach((st, s) => {
          if (st.actions.length === 0) return;
          const pi = softTokenPolicy(soft, s, []);
          expect(pi.reduce((a, x) => a + x.prob, 0)).toBeCloseTo(1, 9);
          // Soft value ≥ hard value (entropy bonus is ≥ 0 up to the log|A| term) and within β·log(#actions·depth).
          const bound = 1e-3 * Math.log(4 ** 4) * 25;
          expect(Math.abs(soft.v[s]![0]! - hard.v[s]![0]!)).toBeLessThan(bound + 1e-9);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('uniform references differ between levels when actions share prefixes (why the product reference matters)', () => {
    const mdp: TokenMdp = {
      states: [
        {
          actions: [
            { tokens: [1, 1], reward: 1, next: [] },
            { tokens: [1, 2], reward: 1, next: [] },
            { tokens: [2], reward: 1, next: [] },
          ],
        },
      ],
    };
    const soft = softBadQIteration(mdp, { gamma: 0.9, beta: 1 });
    const uniformActions = softActionQIteration(mdp, { gamma: 0.9, beta: 1 });
    expect(soft.v[0]![0]!).toBeCloseTo(1, 12); // π̄ = (1/4, 1/4, 1/2): log Σ π̄·e¹ = 1
    expect(uniformActions.v[0]!).toBeCloseTo(1, 12);
    const productRef = productReference(mdp);
    expect(productRef(0, 0)).toBeCloseTo(0.25, 12);
    expect(productRef(0, 2)).toBeCloseTo(0.5, 12);
  });
});

describe('token MDP validation', () => {
  it('rejects prefix actions, empty actions, bad probabilities and unknown states', () => {
    const bad = (actions: unknown[]) => ({ states: [{ actions }] }) as unknown as TokenMdp;
    expect(() =>
      badQIteration(
        bad([
          { tokens: [1], reward: 0, next: [] },
          { tokens: [1, 2], reward: 0, next: [] },
        ]),
        { gamma: 0.9 },
      ),
    ).toThrow(/prefix/);
    expect(() => badQIteration(bad([{ tokens: [], reward: 0, next: [] }]), { gamma: 0.9 })).toThrow(
      TokenMdpError,
    );
    expect(() =>
      badQIteration(bad([{ tokens: [1], reward: 0, next: [{ state: 0, prob: 1.5 }] }]), {
        gamma: 0.9,
      }),
    ).toThrow(/probability/);
    expect(() =>
      badQIteration(bad([{ tokens: [1], reward: 0, next: [{ state: 3, prob: 1 }] }]), {
        gamma: 0.9,
      }),
    ).toThrow(/outside/);
    expect(() =>
      badQIteration(bad([{ tokens: [1], reward: Number.NaN, next: [] }]), { gamma: 0.9 }),
    ).toThrow(/reward/);
    expect(() =>
      softBadQIteration(bad([{ tokens: [1], reward: 0, next: [] }]), { gamma: 0.9, beta: 0 }),
    ).toThrow(/beta/);
    expect(() => badQIteration(bad([{ tokens: [1], reward: 0, next: [] }]), { gamma: 2 })).toThrow(
      RangeError,
    );
  });
  it('reports non-convergence instead of looping forever', () => {
    const loop: TokenMdp = {
      states: [{ actions: [{ tokens: [1], reward: 1, next: [{ state: 0, prob: 1 }] }] }],
    };
    const r = badQIteration(loop, { gamma: 1, maxIterations: 50 });
    expect(r.converged).toBe(false);
    expect(r.iterations).toBe(50);
  });
});
