// Random credit MDPs and label policies for property tests.
import fc from 'fast-check';
import type { CreditMdp, CreditState } from '../src/mdp.js';
import type { LabelPolicy } from '../src/policy-input.js';

/** Normalises positive weights to probabilities that sum to 1. */
function normalise(weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

const weight = fc.double({ min: 0.05, max: 1, noNaN: true });
const reward = fc.double({ min: -1, max: 1, noNaN: true });

/**
 * A random MDP: 1–5 running states s0… (s0 the start), 1–2 terminal states t0…, 1–3 labels per
 * running state, 1–3 outcomes per label over any state (loops included), rewards in [−1, 1],
 * γ in [0, 0.95].
 */
export function creditMdpArb(): fc.Arbitrary<CreditMdp> {
  return fc
    .record({ running: fc.integer({ min: 1, max: 5 }), terminals: fc.integer({ min: 1, max: 2 }) })
    .chain(({ running, terminals }) => {
      const ids = [
        ...Array.from({ length: running }, (_, i) => `s${i}`),
        ...Array.from({ length: terminals }, (_, i) => `t${i}`),
      ];
      const outcome = fc.record({ state: fc.constantFrom(...ids), w: weight, reward });
      const action = fc.array(outcome, { minLength: 1, maxLength: 3 });
      const state = fc.array(action, { minLength: 1, maxLength: 3 });
      return fc
        .record({
          gamma: fc.double({ min: 0, max: 0.95, noNaN: true }),
          states: fc.array(state, { minLength: running, maxLength: running }),
          success: fc.array(fc.boolean(), { minLength: terminals, maxLength: terminals }),
        })
        .map(
          ({ gamma, states, success }): CreditMdp => ({
            id: 'credit/random',
            gamma,
            start: 's0',
            maxSteps: 50,
            states: [
              ...states.map(
                (actions, i): CreditState => ({
                  id: `s${i}`,
                  observation: `state ${i}`,
                  terminal: false,
                  success: false,
                  actions: actions.map((outs, a) => {
                    const probs = normalise(outs.map((o) => o.w));
                    return {
                      label: `label ${a}`,
                      outcomes: outs.map((o, k) => ({
                        state: o.state,
                        prob: probs[k]!,
                        reward: o.reward,
                      })),
                    };
                  }),
                }),
              ),
              ...success.map(
                (ok, i): CreditState => ({
                  id: `t${i}`,
                  observation: `end ${i}`,
                  terminal: true,
                  success: ok,
                  actions: [],
                }),
              ),
            ],
          }),
        );
    });
}

/** An MDP with a random policy over its labels (some labels may get probability 0). */
export function mdpWithPolicyArb(): fc.Arbitrary<{ mdp: CreditMdp; pi: LabelPolicy }> {
  return creditMdpArb().chain((mdp) => {
    const rows = mdp.states.map((st) =>
      fc.array(fc.oneof(weight, fc.constant(0)), {
        minLength: st.actions.length,
        maxLength: st.actions.length,
      }),
    );
    return fc.tuple(...rows).map((weights) => {
      const table = new Map<string, number[]>();
      mdp.states.forEach((st, s) => {
        if (st.terminal) return;
        const w = weights[s]!;
        // at least one label must have weight
        table.set(st.id, normalise(w.some((x) => x > 0) ? w : w.map((_, i) => (i === 0 ? 1 : 0))));
      });
      const pi: LabelPolicy = (stateId) => table.get(stateId)!;
      return { mdp, pi };
    });
  });
}
