// `softPolicyEvaluation` against the optimal soft solver, an independent evaluation loop, and
// its own fixed-point equations.
import { expectNear } from '@poad/dev-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TokenMdp } from '../../src/index.js';
import { productReference, softActionQIteration, softPolicyEvaluation } from '../../src/index.js';
import { betaArb, gammaArb, tokenMdpArb } from '../mdp.js';
import { smallIdReference, softActionEvaluation } from '../softBackup.js';

const RUNS = { numRuns: 200 };

/** A random MDP with a random policy: `weights` give π(a|s) ∝ weight (some weights are 0). */
const withPolicy = tokenMdpArb().chain((mdp) => {
  const count = mdp.states.reduce((acc, st) => acc + st.actions.length, 0);
  return fc.record({
    mdp: fc.constant(mdp),
    weights: fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0.05, max: 1, noNaN: true })), {
      minLength: count,
      maxLength: count,
    }),
  });
});

function policyOf(mdp: TokenMdp, weights: readonly number[]): (s: number, a: number) => number {
  let offset = 0;
  const probs = mdp.states.map((st) => {
    const w = st.actions.map((_, a) => weights[offset + a]!);
    offset += st.actions.length;
    const total = w.reduce((x, y) => x + y, 0);
    // A state whose weights are all 0 gets the uniform policy.
    return total > 0 ? w.map((x) => x / total) : w.map(() => 1 / w.length);
  });
  return (s, a) => probs[s]![a]!;
}

describe('softPolicyEvaluation', () => {
  it('at the soft-optimal policy π ∝ π̄·exp(Q*/β) it gives softActionQIteration’s Q* and V*', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, fc.boolean(), (mdp, gamma, beta, skewed) => {
        const reference = skewed ? productReference(mdp, smallIdReference(mdp)) : undefined;
        const opt = softActionQIteration(mdp, { gamma, beta, reference });
        const ref = (s: number, a: number) =>
          reference ? reference(s, a) : 1 / mdp.states[s]!.actions.length;
        const star = (s: number, a: number) =>
          ref(s, a) * Math.exp((opt.q[s]![a]! - opt.v[s]!) / beta);
        const ev = softPolicyEvaluation(mdp, { gamma, beta, policy: star, reference });
        expect(opt.converged && ev.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          expectNear(ev.v[s]!, opt.v[s]!);
          st.actions.forEach((_, a) => {
            expectNear(ev.q[s]![a]!, opt.q[s]![a]!);
          });
        });
      }),
      RUNS,
    );
  });

  it('any other policy is worth no more than the soft optimum', () => {
    fc.assert(
      fc.property(withPolicy, gammaArb, betaArb, ({ mdp, weights }, gamma, beta) => {
        const opt = softActionQIteration(mdp, { gamma, beta });
        const ev = softPolicyEvaluation(mdp, { gamma, beta, policy: policyOf(mdp, weights) });
        mdp.states.forEach((_, s) => {
          expect(ev.v[s]!).toBeLessThanOrEqual(opt.v[s]! + 1e-9 * Math.max(1, Math.abs(opt.v[s]!)));
        });
      }),
      RUNS,
    );
  });

  it('matches an independent evaluation loop and satisfies its own equations; β = 0 is plain policy evaluation', () => {
    fc.assert(
      fc.property(
        withPolicy,
        gammaArb,
        fc.oneof(fc.constant(0), betaArb),
        fc.boolean(),
        ({ mdp, weights }, gamma, beta, skewed) => {
          const policy = policyOf(mdp, weights);
          const reference = skewed ? productReference(mdp, smallIdReference(mdp)) : undefined;
          const ref = (s: number, a: number) =>
            reference ? reference(s, a) : 1 / mdp.states[s]!.actions.length;
          const ev = softPolicyEvaluation(mdp, { gamma, beta, policy, reference });
          expect(ev.converged).toBe(true);
          const loop = softActionEvaluation(mdp, {
            gamma,
            beta,
            logPolicy: (s, a) => Math.log(policy(s, a)),
            logReference: (s, a) => Math.log(ref(s, a)),
          });
          mdp.states.forEach((st, s) => {
            expectNear(ev.v[s]!, loop.v[s]!);
            let v = 0;
            st.actions.forEach((act, a) => {
              expectNear(ev.q[s]![a]!, loop.q[s]![a]!);
              // Q(s, a) = r + γ·Σ P·V(s'), V(s) = Σ π·(Q − β·log(π/π̄))
              let next = 0;
              for (const o of act.next) next += o.prob * ev.v[o.state]!;
              expectNear(ev.q[s]![a]!, act.reward + gamma * next);
              const p = policy(s, a);
              if (p > 0) v += p * (ev.q[s]![a]! - beta * Math.log(p / ref(s, a)));
            });
            expectNear(ev.v[s]!, v);
          });
        },
      ),
      RUNS,
    );
  });

  it('refuses a policy that is not a distribution, β < 0 and a KL that is infinite', () => {
    const mdp: TokenMdp = {
      states: [
        {
          actions: [
            { tokens: [1], reward: 1, next: [] },
            { tokens: [2], reward: 0, next: [] },
          ],
        },
      ],
    };
    const base = { gamma: 0.9, beta: 0.1 };
    expect(() => softPolicyEvaluation(mdp, { ...base, policy: () => 0.4 })).toThrow(
      /`options.policy` at state 0 sums to 0.8/,
    );
    expect(() => softPolicyEvaluation(mdp, { ...base, policy: () => Number.NaN })).toThrow(
      /`options.policy\(0, 0\)` must be a finite probability/,
    );
    expect(() => softPolicyEvaluation(mdp, { ...base, beta: -1, policy: () => 0.5 })).toThrow(
      /`options.beta` must be a finite number ≥ 0/,
    );
    expect(() =>
      softPolicyEvaluation(mdp, {
        ...base,
        policy: () => 0.5,
        reference: (_s, a) => (a === 0 ? 1 : 0),
      }),
    ).toThrow(/KL\(π‖π̄\) is infinite/);
    expect(() =>
      softPolicyEvaluation(mdp, { ...base, policy: 'uniform' as unknown as () => number }),
    ).toThrow(/`options.policy` must be a function/);
    // β = 0 ignores the reference: Q = (1, 0), V = 0.5.
    const plain = softPolicyEvaluation(mdp, { gamma: 0.9, beta: 0, policy: () => 0.5 });
    expect(plain.v[0]).toBe(0.5);
  });
});
