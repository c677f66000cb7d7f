// Exact token-prefix values of whole tasks (`tokenPrefixValues`, `optimalTokenPrefixValues`,
// `softTokenPrefixValues`): hand-computed cases, properties on random MDPs and tokenisations,
// and the edge cases of tokenisation.

import {
  badQIteration,
  labelLogReference,
  softActionQIteration,
  softBadQIteration,
  softPolicyEvaluation,
  trieNode,
} from '@poad/bellman';
import { expectNear } from '@poad/dev-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CreditArgumentError } from '../src/errors.js';
import type { CreditMdp } from '../src/mdp.js';
import { optimalValues } from '../src/optimal.js';
import { policyAdvantages } from '../src/policy.js';
import { type LabelPolicy, uniformPolicy } from '../src/policy-input.js';
import {
  type LabelTokenIds,
  optimalTokenPrefixValues,
  prefixValueOf,
  prefixValuesOf,
  softTokenPrefixValues,
  tokenPrefixValues,
} from '../src/prefix-values.js';
import { creditMdp } from '../src/tasks.js';
import { creditTokenMdp } from '../src/token-mdp.js';
import { mdpWithPolicyArb } from './arbitraries.js';

const RUNS = { numRuns: 150 };

/** One token per word, the same id for the same word across the task. */
function wordTokenizer(): LabelTokenIds {
  const vocab = new Map<string, number>();
  return (_stateId, labels) =>
    labels.map((l) =>
      Int32Array.from(l.split(' '), (w) => {
        if (!vocab.has(w)) vocab.set(w, vocab.size + 1);
        return vocab.get(w)!;
      }),
    );
}

describe('the key-token task, one token per word', () => {
  const CUP = (a: string) => `put the ${a} cup on the shelf`;

  it('V^π stays at V^π(table) = 1/3 until the key word, then is the label’s Q', () => {
    // Uniform π over dirty, clean, full; Q^π = Q (one step) = 0, 1, 0. Every label begins
    // "put the", so before tokens 0, 1 and 2 all three remain: 1/3. After the adjective only
    // the chosen label remains: its Q, through to the end.
    const values = tokenPrefixValues('key-token', uniformPolicy, wordTokenizer());
    expect(values.kind).toBe('policy');
    expect(values.undefinedPrefixes).toBe(0);
    const clean = prefixValuesOf(values, 'table', CUP('clean'));
    const dirty = prefixValuesOf(values, 'table', CUP('dirty'));
    expect(clean).toHaveLength(8); // 7 words + the value after the last
    const third = [0, 1, 2].map((k) => clean[k]!);
    for (const x of third) expect(x).toBeCloseTo(1 / 3, 14);
    expect(Array.from(clean.subarray(3))).toEqual([1, 1, 1, 1, 1]);
    expect(Array.from(dirty.subarray(0, 3))).toEqual(third);
    expect(Array.from(dirty.subarray(3))).toEqual([0, 0, 0, 0, 0]);
    expect(values.v.table).toBe(clean[0]);
    expect(values.v.success).toBe(0);
    expect(prefixValueOf(values, 'table', CUP('clean'), 7)).toBe(1);
    // V*: 1 before every token of the clean label; 1 until the key word of the others, then 0.
    const star = optimalTokenPrefixValues('key-token', wordTokenizer());
    expect(Array.from(prefixValuesOf(star, 'table', CUP('full')))).toEqual([
      1, 1, 1, 0, 0, 0, 0, 0,
    ]);
    expect(Array.from(prefixValuesOf(star, 'table', CUP('clean')))).toEqual([
      1, 1, 1, 1, 1, 1, 1, 1,
    ]);
  });
});

describe('soft values of a two-step task by hand', () => {
  // s0: X → s1 (reward 0), Y → success (0.5), Z → failure (0); s1: U → success (1), W → failure (0).
  // Token ids: X = [1, 2], Y = [1, 3], Z = [4]; U = [7], W = [8, 9]. γ = 0.9, β = 0.5, π̄ uniform
  // over each prefix's continuations. π(s0) = (0.5, 0.25, 0.25), π(s1) = (0.8, 0.2).
  const mdp: CreditMdp = {
    id: 'credit/two-step',
    gamma: 0.9,
    start: 's0',
    maxSteps: 2,
    states: [
      {
        id: 's0',
        observation: 'first',
        terminal: false,
        success: false,
        actions: [
          { label: 'X', outcomes: [{ state: 's1', prob: 1, reward: 0 }] },
          { label: 'Y', outcomes: [{ state: 'success', prob: 1, reward: 0.5 }] },
          { label: 'Z', outcomes: [{ state: 'failure', prob: 1, reward: 0 }] },
        ],
      },
      {
        id: 's1',
        observation: 'second',
        terminal: false,
        success: false,
        actions: [
          { label: 'U', outcomes: [{ state: 'success', prob: 1, reward: 1 }] },
          { label: 'W', outcomes: [{ state: 'failure', prob: 1, reward: 0 }] },
        ],
      },
      { id: 'success', observation: 'won', terminal: true, success: true, actions: [] },
      { id: 'failure', observation: 'lost', terminal: true, success: false, actions: [] },
    ],
  };
  const ids: Record<string, number[]> = { X: [1, 2], Y: [1, 3], Z: [4], U: [7], W: [8, 9] };
  const tokenIds: LabelTokenIds = (_s, labels) => labels.map((l) => ids[l]!);
  const pi: LabelPolicy = (s) => (s === 's0' ? [0.5, 0.25, 0.25] : [0.8, 0.2]);
  // V(s1) = 0.8·(1 − 0.5·ln(0.8/0.5)) + 0.2·(0 − 0.5·ln(0.2/0.5)) = 0.703627621
  const v1 = 0.8 - 0.4 * Math.log(1.6) - 0.1 * Math.log(0.4);
  // Q(s0, X) = 0.9·V(s1) = 0.633264859; V(s0) = 0.5·Q_X + 0.125 − 0.125·ln 2 = 0.354989032
  const qx = 0.9 * v1;
  const v0 = 0.5 * qx + 0.125 - 0.125 * Math.log(2);
  // After [1]: X, Y with π = (2/3, 1/3), π̄ = (1/2, 1/2):
  //   2/3·(Q_X − 0.5·ln(4/3)) + 1/3·(0.5 − 0.5·ln(2/3)) = 0.560526733
  const v01 = (2 / 3) * (qx - 0.5 * Math.log(4 / 3)) + (1 / 3) * (0.5 - 0.5 * Math.log(2 / 3));

  it('every prefix, the soft Q after the last token, and V_soft per state', () => {
    const soft = softTokenPrefixValues(mdp, pi, tokenIds, { beta: 0.5 });
    expect([soft.kind, soft.beta, soft.gamma]).toEqual(['soft', 0.5, 0.9]);
    expectNear(soft.v.s1!, v1, 1e-12);
    expectNear(soft.v.s0!, v0, 1e-12);
    const x = prefixValuesOf(soft, 's0', 'X', [1, 2]);
    expect(x).toHaveLength(3);
    expectNear(x[0]!, v0, 1e-12);
    expectNear(x[1]!, v01, 1e-12);
    expectNear(x[2]!, qx, 1e-12);
    expectNear(prefixValueOf(soft, 's0', 'Y', 1), v01, 1e-12);
    expect(prefixValueOf(soft, 's0', 'Y', 2)).toBe(0.5);
    expect(Array.from(prefixValuesOf(soft, 's1', 'W').subarray(1))).toEqual([0, 0]);
    // β = 0: the plain values of π. After [1]: (0.5·Q_X + 0.25·0.5)/0.75 with Q_X = 0.9·0.8.
    const plain = softTokenPrefixValues(mdp, pi, tokenIds, { beta: 0 });
    expectNear(prefixValueOf(plain, 's0', 'X', 1), (0.5 * 0.72 + 0.125) / 0.75, 1e-12);
    const hard = tokenPrefixValues(mdp, pi, tokenIds);
    expectNear(prefixValueOf(hard, 's0', 'X', 1), (0.5 * 0.72 + 0.125) / 0.75, 1e-14);
  });

  it('a reference of our own reaches the KL through the label tree', () => {
    // π̄ at s0: first tokens 1 → 0.8, 4 → 0.2; after [1]: 2 and 3 → 0.5 each. At s1 uniform.
    const reference = (s: string, labels: readonly string[]) =>
      labels.map((l) =>
        s === 's0'
          ? l === 'Z'
            ? [Math.log(0.2)]
            : [Math.log(0.8), Math.log(0.5)]
          : ids[l]!.map((_, k) => (k === 0 ? Math.log(0.5) : 0)),
      );
    const soft = softTokenPrefixValues(mdp, pi, tokenIds, { beta: 0.5, reference });
    // π̄(X) = π̄(Y) = 0.4, π̄(Z) = 0.2: V(s0) = Σ π·(Q − β·ln(π/π̄)).
    const want =
      0.5 * (qx - 0.5 * Math.log(0.5 / 0.4)) +
      0.25 * (0.5 - 0.5 * Math.log(0.25 / 0.4)) +
      0.25 * (0 - 0.5 * Math.log(0.25 / 0.2));
    expectNear(soft.v.s0!, want, 1e-12);
    const bad = (_s: string, labels: readonly string[]) => labels.map(() => [Math.log(0.3)]);
    expect(() => softTokenPrefixValues(mdp, pi, tokenIds, { beta: 0.5, reference: bad })).toThrow(
      /softTokenPrefixValues\(options.reference\): state "s0": .*`options.referenceLogProbs\[0\]` has length 1 but must have length 2: one log-prob per token of label 0/,
    );
  });
});

/** Random tokenisations of a random MDP's labels over a tiny vocabulary. */
function tokenisedArb(opts: { tree?: boolean } = {}) {
  return mdpWithPolicyArb().chain(({ mdp, pi }) =>
    fc
      .tuple(
        ...mdp.states.map((st) =>
          fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }), {
            minLength: st.actions.length,
            maxLength: st.actions.length,
          }),
        ),
      )
      .map((perState) => {
        const table = new Map<string, number[][]>();
        mdp.states.forEach((st, s) => {
          // A tree: a stop token of its own (100 + label index) ends every label.
          table.set(
            st.id,
            perState[s]!.map((t, a) => (opts.tree ? [...t, 100 + a] : t)),
          );
        });
        const tokenIds: LabelTokenIds = (stateId) => table.get(stateId)!;
        return { mdp, pi, tokenIds, table };
      }),
  );
}

/** The labels of a state still writing token k after `own`'s first k tokens. */
function continuing(
  all: readonly (readonly number[])[],
  own: readonly number[],
  k: number,
): number[] {
  return all.flatMap((t, a) =>
    t.length > k && own.slice(0, k).every((w, j) => t[j] === w) ? [a] : [],
  );
}

describe('properties on random tasks and tokenisations', () => {
  it('entry 0 is V^π(s), the last entry Q^π(s, a), and each prefix the π-weighted mean of the next values (the martingale)', () => {
    fc.assert(
      fc.property(tokenisedArb(), ({ mdp, pi, tokenIds, table }) => {
        const exact = policyAdvantages(mdp, pi);
        const values = tokenPrefixValues(mdp, pi, tokenIds);
        let undefinedCount = 0;
        for (const st of mdp.states) {
          if (st.terminal) {
            expect(values.v[st.id]).toBe(0);
            continue;
          }
          expectNear(values.v[st.id]!, exact.v[st.id]!, 1e-12);
          const all = table.get(st.id)!;
          const probs = st.actions.map((a) => exact.policy[st.id]![a.label]!);
          st.actions.forEach((act, c) => {
            const own = all[c]!;
            const v = prefixValuesOf(values, st.id, act.label, own);
            expectNear(v[0]!, exact.v[st.id]!, 1e-12);
            expectNear(v[own.length]!, exact.q[st.id]![act.label]!, 1e-12);
            for (let k = 0; k < own.length; k++) {
              const members = continuing(all, own, k).filter((a) => probs[a]! > 0);
              const mass = members.reduce((acc, a) => acc + probs[a]!, 0);
              if (mass === 0) {
                expect(v[k]).toBeNaN();
                undefinedCount++;
                continue;
              }
              const next = members.reduce(
                (acc, a) =>
                  acc + probs[a]! * prefixValueOf(values, st.id, st.actions[a]!.label, k + 1),
                0,
              );
              expectNear(v[k]!, next / mass, 1e-12);
            }
          });
        }
        expect(values.undefinedPrefixes).toBe(undefinedCount);
      }),
      RUNS,
    );
  });

  it('V* is V*(s) at entry 0, Q* at the end, and on a label tree the BAD fixed point of badQIteration', () => {
    fc.assert(
      fc.property(tokenisedArb({ tree: true }), ({ mdp, tokenIds, table }) => {
        const star = optimalValues(mdp);
        const values = optimalTokenPrefixValues(mdp, tokenIds);
        expect(values.undefinedPrefixes).toBe(0);
        // The task's token MDP with each state's labels spelled by the random ids.
        const { tokenMdp } = creditTokenMdp(mdp);
        const bad = badQIteration(
          {
            states: tokenMdp.states.map((st, s) => ({
              actions: st.actions.map((a, i) => ({
                ...a,
                tokens: table.get(mdp.states[s]!.id)![i]!,
              })),
            })),
          },
          { gamma: mdp.gamma, tolerance: 1e-13 },
        );
        mdp.states.forEach((st, s) => {
          expectNear(values.v[st.id]!, star.v[st.id]!, 1e-12);
          st.actions.forEach((act, a) => {
            const own = table.get(st.id)![a]!;
            const v = prefixValuesOf(values, st.id, act.label);
            expect(v[own.length]).toBe(star.q[st.id]![act.label]);
            for (let k = 0; k <= own.length; k++) {
              const node = trieNode(bad.tries[s]!, own.slice(0, k));
              expectNear(v[k]!, k < own.length ? bad.v[s]![node]! : bad.q[s]![node]!, 1e-9);
            }
          });
        });
      }),
      RUNS,
    );
  });

  it('soft: entry 0 is softPolicyEvaluation’s V, each prefix is the token-level soft backup of the next, β = 0 gives V^π', () => {
    const betaArb = fc.double({ min: 0.05, max: 3, noNaN: true });
    fc.assert(
      fc.property(tokenisedArb({ tree: true }), betaArb, ({ mdp, pi, tokenIds, table }, beta) => {
        const soft = softTokenPrefixValues(mdp, pi, tokenIds, { beta });
        const { tokenMdp } = creditTokenMdp(mdp);
        const exact = policyAdvantages(mdp, pi);
        const probsOf = (id: string) =>
          mdp.states.find((st) => st.id === id)!.actions.map((a) => exact.policy[id]![a.label]!);
        const logRef = new Map(
          mdp.states
            .filter((st) => !st.terminal)
            .map((st) => [st.id, labelLogReference(table.get(st.id)!)]),
        );
        const ev = softPolicyEvaluation(tokenMdp, {
          gamma: mdp.gamma,
          beta,
          policy: (s, a) => probsOf(mdp.states[s]!.id)[a]!,
          reference: (s, a) => Math.exp(logRef.get(mdp.states[s]!.id)![a]!),
          tolerance: 1e-13,
        });
        mdp.states.forEach((st, s) => {
          expectNear(soft.v[st.id]!, ev.v[s]!, 1e-9);
          if (st.terminal) return;
          const all = table.get(st.id)!;
          const probs = probsOf(st.id);
          st.actions.forEach((act, c) => {
            const own = all[c]!;
            const v = prefixValuesOf(soft, st.id, act.label);
            expectNear(v[own.length]!, ev.q[s]![c]!, 1e-9);
            for (let k = 0; k < own.length; k++) {
              const members = continuing(all, own, k);
              const mass = members.reduce((acc, a) => acc + probs[a]!, 0);
              if (mass === 0) {
                expect(v[k]).toBeNaN();
                continue;
              }
              // Token level: Σ_w π(w|w_<k)·[Q(w_<k, w) − β·ln(π(w|w_<k)/π̄(w|w_<k))], π̄ uniform
              // over the next tokens, Q(w_<k, w) the value one token on (a label's soft Q at its end).
              const next = new Map<number, number[]>();
              for (const a of members) next.set(all[a]![k]!, [...(next.get(all[a]![k]!) ?? []), a]);
              let backup = 0;
              for (const [, group] of next) {
                const m = group.reduce((acc, a) => acc + probs[a]!, 0);
                if (m === 0) continue;
                const first = group.find((a) => probs[a]! > 0)!;
                const after = prefixValueOf(soft, st.id, st.actions[first]!.label, k + 1);
                backup += (m / mass) * (after - beta * Math.log(m / mass / (1 / next.size)));
              }
              expectNear(v[k]!, backup, 1e-9);
            }
          });
        });
        const plain = softTokenPrefixValues(mdp, pi, tokenIds, { beta: 0 });
        const hard = tokenPrefixValues(mdp, pi, tokenIds);
        for (const st of mdp.states) {
          for (const act of st.actions) {
            const a = prefixValuesOf(plain, st.id, act.label);
            const b = prefixValuesOf(hard, st.id, act.label);
            a.forEach((x, k) => {
              if (Number.isNaN(b[k]!)) expect(x).toBeNaN();
              else expectNear(x, b[k]!, 1e-9);
            });
          }
        }
      }),
      RUNS,
    );
  });

  it('soft, at the soft-optimal policy: the values of softBadQIteration on the task’s token MDP', () => {
    fc.assert(
      fc.property(
        tokenisedArb({ tree: true }),
        fc.double({ min: 0.05, max: 3, noNaN: true }),
        ({ mdp, tokenIds, table }, beta) => {
          const spelled = {
            states: creditTokenMdp(mdp).tokenMdp.states.map((st, s) => ({
              actions: st.actions.map((a, i) => ({
                ...a,
                tokens: table.get(mdp.states[s]!.id)![i]!,
              })),
            })),
          };
          const tree = softBadQIteration(spelled, { gamma: mdp.gamma, beta, tolerance: 1e-13 });
          const logRef = mdp.states.map((st) =>
            st.terminal ? new Float64Array(0) : labelLogReference(table.get(st.id)!),
          );
          const opt = softActionQIteration(creditTokenMdp(mdp).tokenMdp, {
            gamma: mdp.gamma,
            beta,
            reference: (s, a) => Math.exp(logRef[s]![a]!),
            tolerance: 1e-13,
          });
          const star: LabelPolicy = (id) => {
            const s = mdp.states.findIndex((st) => st.id === id);
            const p = mdp.states[s]!.actions.map((_, a) =>
              Math.exp(logRef[s]![a]! + (opt.q[s]![a]! - opt.v[s]!) / beta),
            );
            const z = p.reduce((x, y) => x + y, 0);
            return p.map((x) => x / z);
          };
          const soft = softTokenPrefixValues(mdp, star, tokenIds, { beta });
          mdp.states.forEach((st, s) => {
            st.actions.forEach((act, a) => {
              const own = table.get(st.id)![a]!;
              const v = prefixValuesOf(soft, st.id, act.label);
              for (let k = 0; k <= own.length; k++) {
                const node = trieNode(tree.tries[s]!, own.slice(0, k));
                expectNear(v[k]!, k < own.length ? tree.v[s]![node]! : tree.q[s]![node]!, 1e-8);
              }
            });
          });
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('tokenisation edge cases', () => {
  const CUP = (a: string) => `put the ${a} cup on the shelf`;

  it('labels that are prefixes of others, and labels with the same ids, are measured (hard values); a label that ended leaves the set', () => {
    // key-token with dirty = [1], clean = [1, 2], full = [1, 2, 3]: uniform π, Q = (0, 1, 0).
    const nested: LabelTokenIds = (_s, labels) =>
      labels.map((l) => (l === CUP('dirty') ? [1] : l === CUP('clean') ? [1, 2] : [1, 2, 3]));
    const values = tokenPrefixValues('key-token', uniformPolicy, nested);
    // full: before token 0 all three (1/3); before token 1 (after [1]) clean and full (1/2);
    // before token 2 (after [1, 2]) only full (0): clean ended there.
    const full = prefixValuesOf(values, 'table', CUP('full'));
    expect(full[0]).toBeCloseTo(1 / 3, 14);
    expect(Array.from(full.subarray(1))).toEqual([0.5, 0, 0]);
    expect(Array.from(prefixValuesOf(values, 'table', CUP('clean')).subarray(1))).toEqual([0.5, 1]);
    const star = optimalTokenPrefixValues('key-token', nested);
    expect(Array.from(prefixValuesOf(star, 'table', CUP('full')))).toEqual([1, 1, 0, 0]);
    // Equal ids: both labels count at every prefix.
    const equal: LabelTokenIds = (_s, labels) =>
      labels.map((l) => (l === CUP('full') ? [9] : [5, 6]));
    const eq = tokenPrefixValues('key-token', uniformPolicy, equal);
    expect(Array.from(prefixValuesOf(eq, 'table', CUP('clean')).subarray(1))).toEqual([0.5, 1]);
    // The soft values need a label tree and say which labels break it.
    expect(() => softTokenPrefixValues('key-token', uniformPolicy, nested, { beta: 0.1 })).toThrow(
      /state "table": the token ids of "put the dirty cup on the shelf" begin those of "put the clean cup on the shelf"/,
    );
    expect(() => softTokenPrefixValues('key-token', uniformPolicy, equal, { beta: 0.1 })).toThrow(
      /labels "put the dirty cup on the shelf" and "put the clean cup on the shelf" have the same token ids/,
    );
  });

  it('a prefix only zero-probability labels continue is NaN and counted', () => {
    // π = (dirty 0.5, clean 0.5, full 0), word tokens: every prefix of `full` after "put the full"
    // is reached with probability 0 — 4 entries (before "cup", "on", "the", "shelf").
    const pi: LabelPolicy = () => [0.5, 0.5, 0];
    const values = tokenPrefixValues('key-token', pi, wordTokenizer());
    const full = prefixValuesOf(values, 'table', CUP('full'));
    expect(full[2]).toBeCloseTo(0.5, 14);
    expect(Array.from(full.subarray(3, 7)).every(Number.isNaN)).toBe(true);
    expect(full[7]).toBe(0);
    expect(values.undefinedPrefixes).toBe(4);
    // The optimal values have no such gap.
    expect(optimalTokenPrefixValues('key-token', wordTokenizer()).undefinedPrefixes).toBe(0);
  });

  it('single-token labels give [V(s), Q(s, a)]', () => {
    const one: LabelTokenIds = (_s, labels) => labels.map((_, a) => [a]);
    const values = tokenPrefixValues('delayed', uniformPolicy, one);
    const exact = policyAdvantages('delayed', uniformPolicy);
    const row = prefixValuesOf(values, 'kitchen', 'grab the bread');
    expect(row).toHaveLength(2);
    expectNear(row[0]!, exact.v.kitchen!, 1e-12);
    expect(row[1]).toBe(exact.q.kitchen!['grab the bread']);
  });

  it('refuses token ids that are not one non-empty integer array per label, naming the state and label', () => {
    const run = (ids: LabelTokenIds) => () => tokenPrefixValues('key-token', uniformPolicy, ids);
    expect(run(() => [[1], [2]])).toThrow(CreditArgumentError);
    expect(run(() => [[1], [2]])).toThrow(
      /tokenPrefixValues\(tokenIds\): state "table": expected one array of token ids per label \(3\), got 2 arrays/,
    );
    expect(run(() => [[1], [], [2]])).toThrow(
      /label "put the clean cup on the shelf": expected a non-empty array/,
    );
    expect(run(() => [[1], [2.5], [2]])).toThrow(/token 0 is 2.5; token ids are 32-bit integers/);
    expect(() =>
      tokenPrefixValues('key-token', uniformPolicy, 'words' as unknown as LabelTokenIds),
    ).toThrow(/expected a function \(stateId, labels, observation\)/);
    expect(() =>
      tokenPrefixValues('key-token', uniformPolicy, wordTokenizer(), { gamma: 2 }),
    ).toThrow(/tokenPrefixValues\(options.gamma\)/);
    expect(() =>
      softTokenPrefixValues('key-token', uniformPolicy, wordTokenizer(), { beta: -1 }),
    ).toThrow(/softTokenPrefixValues\(options.beta\)/);
  });

  it('the lookups name what is wrong: state, label, the ids that acted, k', () => {
    const values = tokenPrefixValues('key-token', uniformPolicy, wordTokenizer());
    expect(() => prefixValuesOf(values, 'hall', CUP('clean'))).toThrow(
      /has no state "hall"; its states are table/,
    );
    expect(() => prefixValuesOf(values, 'success', CUP('clean'))).toThrow(
      /terminal and has no labels/,
    );
    expect(() => prefixValuesOf(values, 'table', 'drop the cup')).toThrow(
      /has no label "drop the cup"/,
    );
    const own = values.tokens.table![CUP('clean')]!;
    expect(prefixValuesOf(values, 'table', CUP('clean'), own)).toBe(
      values.prefixes.table![CUP('clean')],
    );
    expect(() => prefixValuesOf(values, 'table', CUP('clean'), own.subarray(1))).toThrow(
      /prefixValuesOf\(ids\): the step's ids .* are not the ids/,
    );
    expect(() => prefixValueOf(values, 'table', CUP('clean'), 8)).toThrow(
      /has 7 tokens, so k is 0..7/,
    );
    expect(() => prefixValueOf(values, 'table', CUP('clean'), -1)).toThrow(CreditArgumentError);
  });

  it('calls the tokenizer once per running state, with its observation; entry 0 is V^π on the tasks', () => {
    for (const task of ['delayed', 'loop', 'risky'] as const) {
      const mdp = creditMdp(task);
      const calls: string[] = [];
      const ids: LabelTokenIds = (stateId, labels, observation) => {
        calls.push(stateId);
        expect(observation).toBe(mdp.states.find((s) => s.id === stateId)!.observation);
        return wordTokenizer()(stateId, labels, observation);
      };
      const values = tokenPrefixValues(task, uniformPolicy, ids);
      // Called once per running state, never for a terminal one.
      expect(calls).toEqual(mdp.states.filter((s) => !s.terminal).map((s) => s.id));
      const exact = policyAdvantages(task, uniformPolicy);
      for (const st of mdp.states) expectNear(values.v[st.id]!, exact.v[st.id]!, 1e-12);
    }
  });
});
