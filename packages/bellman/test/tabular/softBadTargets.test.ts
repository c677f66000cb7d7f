// `softBad` against the tabular soft backups (`softBadQIteration`, `softActionQIteration`) on
// random token MDPs.
import { expectNear } from '@poad/dev-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SoftTokenQTable, TokenMdp } from '../../src/index.js';
import {
  productReference,
  softActionQIteration,
  softBadQIteration,
  softTokenPolicy,
} from '../../src/index.js';
import { softBad } from '../../src/softBad.js';
import { buildTries } from '../../src/tabular/tokenMdp.js';
import { betaArb, gammaArb, tokenMdpArb } from '../mdp.js';
import {
  actionPath,
  actionSegment,
  fixedPolicyCaseArb,
  iterateSoftBad,
  logReferenceOf,
  outcomes,
  smallIdReference,
  softActionEvaluation,
  weightedTokenPolicy,
} from '../softBackup.js';

const RUNS = { numRuns: 200 };

/** π(w|n) of the soft-optimal policy for the token leading into each node of state s's trie. */
function tokenProbs(table: SoftTokenQTable, s: number): Float64Array {
  const trie = table.tries[s]!;
  const probs = new Float64Array(trie.parent.length).fill(Number.NaN);
  trie.children.forEach((kids, n) => {
    if (kids.length === 0) return;
    const prefix: number[] = [];
    for (let m = n; m > 0; m = trie.parent[m]!) prefix.unshift(trie.token[m]!);
    softTokenPolicy(table, s, prefix).forEach((p, i) => {
      probs[kids[i]!] = p.prob;
    });
  });
  return probs;
}

/** The tabular soft solutions of both levels, with the product reference linking them. */
function solve(mdp: TokenMdp, gamma: number, beta: number, skewed: boolean) {
  const reference = skewed ? smallIdReference(mdp) : undefined;
  const table = softBadQIteration(mdp, { gamma, beta, reference });
  const actionReference = productReference(mdp, reference);
  const action = softActionQIteration(mdp, { gamma, beta, reference: actionReference });
  expect(table.converged && action.converged).toBe(true);
  return { reference, table, actionReference, action };
}

describe('softBad on the soft values of the tabular soft-BAD solution', () => {
  it('an action’s last-token target, averaged over its outcomes, is the action-level soft Q; its targets summed along the action give the soft advantage Q_A(s, a) − V_A(s) = β·log(π(a|s)/π̄(a|s))', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, fc.boolean(), (mdp, gamma, beta, skewed) => {
        const { table, actionReference, action } = solve(mdp, gamma, beta, skewed);
        const rootValue = (s: number) => table.v[s]![0]!;
        mdp.states.forEach((st, s) => {
          const probs = tokenProbs(table, s);
          st.actions.forEach((act, a) => {
            const path = actionPath(table.tries[s]!, a);
            const n = act.tokens.length;
            let last = 0;
            let advantage = 0;
            for (const o of outcomes(act)) {
              const seg = actionSegment(act, path, table.v[s]!, o.state, rootValue);
              const y = softBad(seg, { gamma });
              // Inner tokens: the tabular per-token soft Q, exactly.
              for (let j = 0; j < n - 1; j++) expect(y[j]).toBe(table.q[s]![path[j + 1]!]);
              last += o.prob * y[n - 1]!;
              for (let j = 0; j < n; j++) advantage += o.prob * (y[j]! - seg.values[j]!);
            }
            expectNear(last, action.q[s]![a]!);
            expectNear(advantage, action.q[s]![a]! - action.v[s]!);
            // The soft-optimal action probability is the product of the token probabilities.
            let prob = 1;
            for (let j = 1; j <= n; j++) prob *= probs[path[j]!]!;
            expect(
              Math.abs(prob - actionReference(s, a) * Math.exp(advantage / beta)),
            ).toBeLessThan(1e-9);
          });
        });
      }),
      RUNS,
    );
  });

  it('an inner token’s target (the soft value after it) is E_π[Q_A] − β·KL(π‖π̄) over the actions completing its prefix, so it carries the KL of the later tokens; at the root this is V_A(s)', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, fc.boolean(), (mdp, gamma, beta, skewed) => {
        const { table, action } = solve(mdp, gamma, beta, skewed);
        mdp.states.forEach((st, s) => {
          const trie = table.tries[s]!;
          const probs = tokenProbs(table, s);
          const logRef = table.logReference[s]!;
          const paths = st.actions.map((_, a) => actionPath(trie, a));
          trie.children.forEach((kids, node) => {
            if (kids.length === 0) return;
            const d = trie.depth[node]!;
            // One token: V(n) = Σ_w π(w|n)·[Q(n, w) − β·log(π(w|n)/π̄(w|n))], the soft value.
            let oneStep = 0;
            for (const c of kids) {
              const p = probs[c]!;
              if (p > 0) oneStep += p * (table.q[s]![c]! - beta * (Math.log(p) - logRef[c]!));
            }
            expectNear(oneStep, table.v[s]![node]!);
            // The whole completion: π(a|n) = Π_{j>d} π(w^j|…), π̄(a|n) = Π_{j>d} π̄(w^j|…).
            let completions = 0;
            paths.forEach((path, a) => {
              if (path[d] !== node) return;
              let p = 1;
              let logRefA = 0;
              for (let j = d + 1; j < path.length; j++) {
                p *= probs[path[j]!]!;
                logRefA += logRef[path[j]!]!;
              }
              if (p > 0) completions += p * (action.q[s]![a]! - beta * (Math.log(p) - logRefA));
            });
            expectNear(completions, table.v[s]![node]!);
            if (node === 0) expectNear(table.v[s]![0]!, action.v[s]!);
          });
        });
      }),
      RUNS,
    );
  });

  it('along a random walk through the MDP, inner targets are the tabular token Q and last targets r + γ·(1 − done)·V(o_{t+1})', () => {
    const stepArb = fc.tuple(fc.nat(), fc.nat(), fc.nat());
    fc.assert(
      fc.property(
        tokenMdpArb(),
        gammaArb,
        betaArb,
        fc.array(stepArb, { minLength: 1, maxLength: 8 }),
        (mdp, gamma, beta, steps) => {
          const { table } = solve(mdp, gamma, beta, false);
          const live = mdp.states.flatMap((st, s) => (st.actions.length > 0 ? [s] : []));
          const seg = {
            rewards: [] as number[],
            dones: [] as boolean[],
            tokenCounts: [] as number[],
            values: [] as number[],
            bootstrapValue: Number.NaN,
          };
          const expected: number[] = [];
          let s = live[0]!;
          for (const [pickAction, pickOutcome, pickReset] of steps) {
            const actions = mdp.states[s]!.actions;
            const a = pickAction % actions.length;
            const act = actions[a]!;
            const path = actionPath(table.tries[s]!, a);
            const outs = outcomes(act);
            const next = outs[pickOutcome % outs.length]!.state;
            // Reaching a terminal state ends the episode too (its value is 0).
            const done = next < 0 || mdp.states[next]!.actions.length === 0;
            seg.rewards.push(act.reward);
            seg.dones.push(done);
            seg.tokenCounts.push(act.tokens.length);
            for (let j = 0; j < act.tokens.length; j++) {
              seg.values.push(table.v[s]![path[j]!]!);
              expected.push(
                j + 1 < act.tokens.length
                  ? table.q[s]![path[j + 1]!]!
                  : done
                    ? act.reward
                    : act.reward + gamma * table.v[next]![0]!,
              );
            }
            seg.bootstrapValue = done ? Number.NaN : table.v[next]![0]!;
            s = done ? live[pickReset % live.length]! : next;
          }
          expect(Array.from(softBad(seg, { gamma }))).toEqual(expected);
        },
      ),
      RUNS,
    );
  });
});

describe('softBad as the backup operator of a value iteration', () => {
  it('for the soft-greedy policy, reaches the optimum of softActionQIteration (and of softBadQIteration) to 1e-9', () => {
    fc.assert(
      fc.property(tokenMdpArb(), gammaArb, betaArb, fc.boolean(), (mdp, gamma, beta, skewed) => {
        const { reference, table, action } = solve(mdp, gamma, beta, skewed);
        const logReference = logReferenceOf(buildTries(mdp), reference);
        const it = iterateSoftBad(mdp, { gamma, beta, logReference });
        expect(it.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          expectNear(it.v[s]![0]!, action.v[s]!);
          st.actions.forEach((_, a) => {
            expectNear(it.q[s]![it.tries[s]!.actionNode[a]!]!, action.q[s]![a]!);
          });
          table.q[s]!.forEach((q, node) => {
            if (node > 0) expectNear(it.q[s]![node]!, q);
          });
        });
      }),
      RUNS,
    );
  });

  it('for a fixed token policy π, reaches the action-level soft evaluation of π(a|s) = Π_j π(w^j|…) with π̄(a|s) = Π_j π̄(w^j|…) (the chain rule of the KL)', () => {
    fc.assert(
      fc.property(fixedPolicyCaseArb(), ({ mdp, weights, gamma, beta, skewed }) => {
        const reference = skewed ? smallIdReference(mdp) : undefined;
        const tries = buildTries(mdp);
        // π(w|n) ∝ the random weight of the child node.
        const logPolicy = weightedTokenPolicy(tries, weights);
        const logReference = logReferenceOf(tries, reference);
        const it = iterateSoftBad(mdp, { gamma, beta, logReference, logPolicy });
        const actionReference = productReference(mdp, reference);
        const logActionPolicy = (s: number, a: number) =>
          actionPath(tries[s]!, a)
            .slice(1)
            .reduce((acc, node) => acc + logPolicy[s]![node]!, 0);
        const evaluation = softActionEvaluation(mdp, {
          gamma,
          beta,
          logPolicy: logActionPolicy,
          logReference: (s, a) => Math.log(actionReference(s, a)),
        });
        expect(it.converged && evaluation.converged).toBe(true);
        mdp.states.forEach((st, s) => {
          expectNear(it.v[s]![0]!, evaluation.v[s]!);
          st.actions.forEach((_, a) => {
            expectNear(it.q[s]![tries[s]!.actionNode[a]!]!, evaluation.q[s]![a]!);
          });
        });
      }),
      RUNS,
    );
  });
});
