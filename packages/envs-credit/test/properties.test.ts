// Properties of the exact values on random MDPs and on every credit task.

import { actionQIteration, type TokenMdp } from '@poad/bellman';
import { expectNear } from '@poad/dev-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CreditMdp } from '../src/mdp.js';
import { optimalValues } from '../src/optimal.js';
import { policyAdvantages } from '../src/policy.js';
import { type LabelPolicy, uniformPolicy } from '../src/policy-input.js';
import { CREDIT_TASKS, creditMdp } from '../src/tasks.js';
import { creditTokenMdp } from '../src/token-mdp.js';
import { creditMdpArb, mdpWithPolicyArb } from './arbitraries.js';

const RUNS = { numRuns: 300 };

/** The policy that takes the label of highest Q* in every state (the first of equals). */
function greedyOptimal(mdp: CreditMdp): LabelPolicy {
  const { q } = optimalValues(mdp);
  return (stateId, labels) => {
    const values = labels.map((l) => q[stateId]![l]!);
    const best = values.indexOf(Math.max(...values));
    return labels.map((_, a) => (a === best ? 1 : 0));
  };
}

/** The same MDP with every reward r(s, ·, s') replaced by f(s, r, s'). */
function mapRewards(
  mdp: CreditMdp,
  f: (from: string, reward: number, to: string) => number,
): CreditMdp {
  return {
    ...mdp,
    states: mdp.states.map((st) => ({
      ...st,
      actions: st.actions.map((act) => ({
        ...act,
        outcomes: act.outcomes.map((o) => ({ ...o, reward: f(st.id, o.reward, o.state) })),
      })),
    })),
  };
}

describe('A^π on random MDPs', () => {
  it('Σ_a π(a|s)·A^π(s, a) = 0 at every state, and V^π solves its Bellman equation', () => {
    fc.assert(
      fc.property(mdpWithPolicyArb(), ({ mdp, pi }) => {
        const p = policyAdvantages(mdp, pi);
        for (const st of mdp.states) {
          let mean = 0;
          let backup = 0;
          for (const act of st.actions) {
            const prob = p.policy[st.id]![act.label]!;
            mean += prob * p.advantage[st.id]![act.label]!;
            for (const o of act.outcomes)
              backup += prob * o.prob * (o.reward + mdp.gamma * p.v[o.state]!);
          }
          expectNear(mean, 0, 1e-10);
          expectNear(p.v[st.id]!, st.terminal ? 0 : backup, 1e-10);
        }
      }),
      RUNS,
    );
  });

  it('equals the policy evaluation of @poad/bellman (actionQIteration on the one-action MDP of π) to 1e-9', () => {
    fc.assert(
      fc.property(mdpWithPolicyArb(), ({ mdp, pi }) => {
        const p = policyAdvantages(mdp, pi);
        // Each state keeps one action: the mixture of its labels under π (expected reward and
        // next-state distribution). Its optimal value is V^π.
        const { tokenMdp, stateIds } = creditTokenMdp(mdp);
        const mixed: TokenMdp = {
          states: tokenMdp.states.map((st, s) => {
            if (st.actions.length === 0) return { actions: [] };
            const probs = st.actions.map(
              (_, a) => p.policy[stateIds[s]!]![mdp.states[s]!.actions[a]!.label]!,
            );
            return {
              actions: [
                {
                  tokens: [0],
                  reward: st.actions.reduce((acc, act, a) => acc + probs[a]! * act.reward, 0),
                  next: st.actions.flatMap((act, a) =>
                    act.next.map((n) => ({ state: n.state, prob: probs[a]! * n.prob })),
                  ),
                },
              ],
            };
          }),
        };
        const iterated = actionQIteration(mixed, { gamma: mdp.gamma, tolerance: 1e-13 });
        expect(iterated.converged).toBe(true);
        stateIds.forEach((id, s) => {
          expectNear(p.v[id]!, iterated.v[s]!);
        });
      }),
      RUNS,
    );
  });

  it('V^π of the greedy optimal policy equals V*, and no policy beats V*', () => {
    fc.assert(
      fc.property(mdpWithPolicyArb(), ({ mdp, pi }) => {
        const star = optimalValues(mdp);
        const greedy = policyAdvantages(mdp, greedyOptimal(mdp));
        const other = policyAdvantages(mdp, pi);
        for (const st of mdp.states) {
          expectNear(greedy.v[st.id]!, star.v[st.id]!);
          expect(other.v[st.id]!).toBeLessThanOrEqual(star.v[st.id]! + 1e-9);
          // Under the optimal policy no label has a positive advantage.
          for (const act of st.actions) {
            expect(greedy.advantage[st.id]![act.label]!).toBeLessThanOrEqual(1e-9);
          }
        }
      }),
      RUNS,
    );
  });

  it('potential-based shaping r + γ·Φ(s′) − Φ(s) (Φ = 0 at terminal states) leaves A^π unchanged and shifts V^π by −Φ', () => {
    const arb = mdpWithPolicyArb().chain(({ mdp, pi }) =>
      fc
        .array(fc.double({ min: -2, max: 2, noNaN: true }), {
          minLength: mdp.states.length,
          maxLength: mdp.states.length,
        })
        .map((phis) => ({ mdp, pi, phis })),
    );
    fc.assert(
      fc.property(arb, ({ mdp, pi, phis }) => {
        const phi = new Map(mdp.states.map((st, s) => [st.id, st.terminal ? 0 : phis[s]!]));
        const shaped = mapRewards(
          mdp,
          (from, r, to) => r + mdp.gamma * phi.get(to)! - phi.get(from)!,
        );
        const a = policyAdvantages(mdp, pi);
        const b = policyAdvantages(shaped, pi);
        for (const st of mdp.states) {
          expectNear(b.v[st.id]!, a.v[st.id]! - phi.get(st.id)!);
          for (const act of st.actions) {
            expectNear(b.advantage[st.id]![act.label]!, a.advantage[st.id]![act.label]!);
          }
        }
      }),
      RUNS,
    );
  });

  it('scaling every reward by c scales V^π, Q^π and A^π by c', () => {
    fc.assert(
      fc.property(
        mdpWithPolicyArb(),
        fc.double({ min: -3, max: 3, noNaN: true }),
        ({ mdp, pi }, c) => {
          const a = policyAdvantages(mdp, pi);
          const b = policyAdvantages(
            mapRewards(mdp, (_f, r) => c * r),
            pi,
          );
          for (const st of mdp.states) {
            expectNear(b.v[st.id]!, c * a.v[st.id]!);
            for (const act of st.actions) {
              expectNear(b.advantage[st.id]![act.label]!, c * a.advantage[st.id]![act.label]!);
            }
          }
        },
      ),
      RUNS,
    );
  });

  it('a deterministic policy has A^π = 0 at the label it takes', () => {
    fc.assert(
      fc.property(creditMdpArb(), fc.nat(), (mdp, pick) => {
        const pi: LabelPolicy = (_s, labels) =>
          labels.map((_, a) => (a === pick % labels.length ? 1 : 0));
        const p = policyAdvantages(mdp, pi);
        for (const st of mdp.states) {
          if (st.terminal) continue;
          const chosen = st.actions[pick % st.actions.length]!.label;
          expectNear(p.advantage[st.id]![chosen]!, 0, 1e-10);
        }
      }),
      RUNS,
    );
  });
});

describe('on every credit task', () => {
  it.each(CREDIT_TASKS)(
    '%s: the greedy optimal policy reaches V*; the uniform policy sums A^π to 0',
    (task) => {
      const mdp = creditMdp(task);
      const star = optimalValues(task);
      const greedy = policyAdvantages(task, greedyOptimal(mdp));
      const uniform = policyAdvantages(task, uniformPolicy);
      for (const st of mdp.states) {
        expectNear(greedy.v[st.id]!, star.v[st.id]!, 1e-11);
        let mean = 0;
        for (const act of st.actions) {
          mean += uniform.policy[st.id]![act.label]! * uniform.advantage[st.id]![act.label]!;
        }
        expectNear(mean, 0, 1e-12);
      }
    },
  );

  it.each(CREDIT_TASKS)(
    '%s: the optimum is unambiguous (one optimal label wherever the choice matters)',
    (task) => {
      const star = optimalValues(task);
      for (const [state, labels] of Object.entries(star.optimal)) {
        const values = Object.values(star.q[state]!);
        const allEqual = values.every((q) => Math.abs(q - values[0]!) < 1e-9);
        // Filler states offer labels with the same effect; everywhere else one label is best,
        // by a margin of at least 0.05 (the loop's one wasted turn: 1 − 0.95).
        if (allEqual) continue;
        expect(labels, state).toHaveLength(1);
        const best = star.q[state]![labels[0]!]!;
        for (const q of values)
          if (q !== best) expect(best - q).toBeGreaterThanOrEqual(0.05 - 1e-12);
      }
    },
  );
});
