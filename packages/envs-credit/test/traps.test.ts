// The trap each task sets for a method whose credit is wrong, shown with numbers.
import {
  actionGae,
  badQIteration,
  grpoAdvantages,
  ntpoQIteration,
  tokenQ,
  trieNode,
} from '@poad/bellman';
import { createRng, deriveSeed } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createCreditEnv } from '../src/env.js';
import type { CreditMdp } from '../src/mdp.js';
import { optimalValues } from '../src/optimal.js';
import { outcomeCredit } from '../src/outcome-credit.js';
import { policyAdvantages } from '../src/policy.js';
import { uniformPolicy } from '../src/policy-input.js';
import { creditMdp } from '../src/tasks.js';
import { creditTokenMdp } from '../src/token-mdp.js';

/** One token id per distinct word, in order of first appearance. */
function wordTokenizer(): (label: string) => number[] {
  const ids = new Map<string, number>();
  return (label) =>
    label.split(' ').map((w) => {
      if (!ids.has(w)) ids.set(w, ids.size);
      return ids.get(w)!;
    });
}

describe('key-token: intra-action credit', () => {
  it.each([
    ['key-token', 7, 2],
    ['key-token-long', 14, 3],
  ] as const)(
    '%s: under BAD only the key word carries credit; the shared words carry none',
    (task, words, key) => {
      const tokenize = wordTokenizer();
      const { tokenMdp, labels } = creditTokenMdp(task, tokenize);
      const bad = badQIteration(tokenMdp, { gamma: 0.95 });
      const s = 0; // the state 'table'
      const right = labels[s]!.find((l) => l.includes('clean'))!;
      const wrong = labels[s]!.find((l) => l.includes('dirty'))!;
      const r = tokenize(right);
      const w = tokenize(wrong);
      expect(r).toHaveLength(words);
      // The labels agree up to the key word and differ only there.
      expect(r.slice(0, key)).toEqual(w.slice(0, key));
      expect(r[key]).not.toBe(w[key]);
      expect(r.slice(key + 1)).toEqual(w.slice(key + 1));
      // BAD's optimal token values: every token of the right label is worth Q* = 1 (the shared
      // prefix leads to it), and the wrong key word 0.
      for (let j = 1; j <= words; j++) expect(tokenQ(bad, s, r.slice(0, j))).toBeCloseTo(1, 12);
      expect(tokenQ(bad, s, w.slice(0, key + 1))).toBeCloseTo(0, 12);

      // Under the uniform policy, token-level values V^π(node) = E_π[Q^π | the label starts with
      // the node's words]; a token's advantage is V^π(after) − V^π(before). Only the key word's
      // differs from 0, and it carries the label's whole A^π.
      const p = policyAdvantages(task, uniformPolicy);
      const trie = bad.tries[s]!;
      const valueAt = (prefix: number[]): number => {
        const matching = labels[s]!.filter((l) => {
          const t = tokenize(l);
          return prefix.every((x, i) => t[i] === x);
        });
        return matching.reduce((acc, l) => acc + p.q.table![l]!, 0) / matching.length;
      };
      const tokenAdvantages = r.map((_, j) => valueAt(r.slice(0, j + 1)) - valueAt(r.slice(0, j)));
      const n = labels[s]!.length;
      expect(trieNode(trie, r)).toBeGreaterThan(0);
      tokenAdvantages.forEach((a, j) => {
        // key word: 1 − 1/n (2/3 with three labels, 3/4 with four); every other word: 0
        expect(a, `word ${j}`).toBeCloseTo(j === key ? 1 - 1 / n : 0, 12);
      });
      expect(tokenAdvantages.reduce((a, b) => a + b, 0)).toBeCloseTo(
        p.advantage.table![right]!,
        12,
      );
      // An action-level method gives every token the label's advantage: (words − 1)/words of what
      // it hands out lands on words that decide nothing (6/7, and 13/14 in the long variant).
    },
  );

  it('NTPO (γ_w = 0.95) discounts the key word by γ_w per later word: 0.95^4 and, long, 0.95^10', () => {
    for (const [task, after] of [
      ['key-token', 4],
      ['key-token-long', 10],
    ] as const) {
      const tokenize = wordTokenizer();
      const { tokenMdp, labels } = creditTokenMdp(task, tokenize);
      const ntpo = ntpoQIteration(tokenMdp, { gamma: 0.95, intraGamma: 0.95 });
      const right = tokenize(labels[0]!.find((l) => l.includes('clean'))!);
      const key = right.length - 1 - after;
      // 4 words after "clean": 0.95^4 = 0.81450625; 10 words: 0.95^10 = 0.598736939…
      expect(tokenQ(ntpo, 0, right.slice(0, key + 1))).toBeCloseTo(0.95 ** after, 12);
      // The first word: 0.95^6 = 0.735 and 0.95^13 = 0.513, although the label is worth 1.
      expect(tokenQ(ntpo, 0, right.slice(0, 1))).toBeCloseTo(0.95 ** (right.length - 1), 12);
    }
  });
});

describe('delayed: turn-level credit', () => {
  it('the filler labels have A^π = 0 but outcome-only credit ±0.35', () => {
    const p = policyAdvantages('delayed', uniformPolicy);
    const c = outcomeCredit('delayed', uniformPolicy);
    for (const st of ['bread-3', 'chips-3']) {
      for (const label of ['walk on', 'walk down the hallway']) {
        expect(p.advantage[st]![label]).toBeCloseTo(0, 14);
        expect(Math.abs(c.credit[st]![label]!)).toBeCloseTo(0.35, 14);
      }
    }
  });

  it('myopic credit prefers the chips: n-step returns with n ≤ D see only the lure', () => {
    // Credit from the next n rewards only (no critic): bread 0 (its +1 is D + 1 steps away),
    // chips 0.3. A method whose credit reaches fewer than D + 1 turns back picks the chips.
    const d = 4;
    expect(optimalValues('delayed').q.kitchen!['grab the bread']).toBeCloseTo(0.95 ** d, 12);
    const nStep = (rewards: number[], n: number) =>
      rewards.slice(0, n).reduce((acc, r, k) => acc + 0.95 ** k * r, 0);
    const bread = [0, 0, 0, 0, 1];
    const chips = [0.3, 0, 0, 0, 0];
    for (let n = 1; n <= d; n++) expect(nStep(bread, n)).toBeLessThan(nStep(chips, n));
    expect(nStep(bread, d + 1)).toBeGreaterThan(nStep(chips, d + 1));
  });

  it('with an untrained critic (V ≡ 0) GAE(γ = λ = 0.95) credits the bread (γλ)^D: 0.663, and 0.292 < 0.3 in the long variant', () => {
    const gae = (rewards: number[]) =>
      actionGae(
        {
          rewards,
          dones: rewards.map((_, t) => t === rewards.length - 1),
          values: rewards.map(() => 0),
          bootstrapValue: 0,
        },
        { gamma: 0.95, lambda: 0.95 },
      ).advantages[0]!;
    for (const [d, bread] of [
      [4, 0.9025 ** 4], // 0.66342…
      [12, 0.9025 ** 12], // 0.29160…
    ] as const) {
      const breadRewards = [...Array(d).fill(0), 1];
      const chipsRewards = [0.3, ...Array(d).fill(0)];
      expect(gae(breadRewards)).toBeCloseTo(bread, 12);
      expect(gae(chipsRewards)).toBeCloseTo(0.3, 12);
    }
    // Long variant: 0.2916 < 0.3, the untrained critic's credit prefers the lure.
    expect(0.9025 ** 12).toBeLessThan(0.3);
  });
});

describe('loop: outcome-only credit rewards a wasted turn', () => {
  it.each([
    ['loop', 0.5],
    ['loop-long', 0.875],
  ] as const)(
    '%s, uniform: the loop gets outcome-only credit +%s but A^π = −1/21',
    (task, credit) => {
      const c = outcomeCredit(task, uniformPolicy);
      const p = policyAdvantages(task, uniformPolicy);
      expect(c.credit.kitchen!['look in the fridge']).toBeCloseTo(credit, 14);
      expect(p.advantage.kitchen!['look in the fridge']).toBeCloseTo(-1 / 21, 14);
      // Outcome-only credit cannot tell the loop from the label that finishes the task.
      expect(c.credit.kitchen!['take the milk from the fridge']).toBeCloseTo(credit, 14);
    },
  );

  it('Dr. GRPO on groups of 8 uniform episodes gives the loop a mean advantage ≈ +0.44 (0.5·7/8)', () => {
    const env = createCreditEnv('loop');
    const rng = createRng(1);
    const loopAdvantages: number[] = [];
    for (let g = 0; g < 2000; g++) {
      const episodes: { total: number; loops: number }[] = [];
      for (let i = 0; i < 8; i++) {
        let step = env.resetSync({ seed: deriveSeed(1, g, i) });
        let total = 0;
        let loops = 0;
        while (!step.terminated && !step.truncated) {
          const label = rng.choice(step.actions!);
          if (label === 'look in the fridge') loops++;
          step = env.stepSync(label);
          total += step.reward;
        }
        episodes.push({ total, loops });
      }
      const adv = grpoAdvantages(
        episodes.map((e) => e.total),
        { normalise: 'none' },
      );
      episodes.forEach((e, i) => {
        for (let k = 0; k < e.loops; k++) loopAdvantages.push(adv[i]!);
      });
    }
    const mean = loopAdvantages.reduce((a, b) => a + b, 0) / loopAdvantages.length;
    // Exact expectation 0.5·(1 − 1/8) = 0.4375 with groups of 8 (the episode's own return is
    // part of its group's mean), up to the rare truncated episode; thousands of samples put the
    // estimate within a few hundredths.
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.48);
    expect(
      policyAdvantages('loop', uniformPolicy).advantage.kitchen!['look in the fridge'],
    ).toBeLessThan(0);
  });
});

describe('risky: the safe label has the higher expected return', () => {
  /** The risky task with the chance turned into a choice: what an optimistic backup assumes. */
  function optimistic(mdp: CreditMdp): CreditMdp {
    return {
      ...mdp,
      states: mdp.states.map((st) => ({
        ...st,
        actions: st.actions.flatMap((act) =>
          act.outcomes.length === 1
            ? [act]
            : act.outcomes.map((o) => ({
                label: `${act.label} and get ${o.state}`,
                outcomes: [{ ...o, prob: 1 }],
              })),
        ),
      })),
    };
  }

  it.each([
    ['risky', 0.9025],
    ['risky-long', 0.95 ** 7],
  ] as const)(
    '%s: E[run] = 0.5 < walk %s, but a backup that maximises over the outcomes runs',
    (task, walk) => {
      const star = optimalValues(task);
      const start = creditMdp(task).start;
      expect(star.q[start]!['walk to the next room']).toBeCloseTo(walk, 12);
      expect(star.q[start]!['run to the living room']).toBeCloseTo(0.5, 12);
      const lucky = optimalValues(optimistic(creditMdp(task)));
      expect(lucky.optimal[start]).toEqual(['run to the living room and get success']);
      expect(lucky.v[start]).toBeCloseTo(1, 12);
    },
  );

  it('the best episode of a group of 8 uniform episodes is a lucky run in 98% of groups', () => {
    const env = createCreditEnv('risky');
    const rng = createRng(2);
    let groups = 0;
    let lucky = 0;
    for (let g = 0; g < 1000; g++) {
      let best = -1;
      let bestRan = false;
      for (let i = 0; i < 8; i++) {
        let step = env.resetSync({ seed: deriveSeed(2, g, i) });
        let ran = false;
        while (!step.terminated && !step.truncated) {
          const label = rng.choice(step.actions!);
          ran ||= label === 'run to the living room';
          step = env.stepSync(label);
        }
        const ret = step.info.discountedReturn as number;
        if (ret > best) {
          best = ret;
          bestRan = ran;
        }
      }
      groups++;
      if (bestRan) lucky++;
    }
    // A lucky run from 3 rooms (probability ½·½ = 1/4, return 1) or from 2 rooms (1/8, return
    // 0.95) beats the whole walk's 0.9025: an episode does so with probability 3/8, and a group
    // of 8 holds one with probability 1 − (5/8)^8 = 0.977 (ties at 0.9025 add a little). So
    // imitating the best episode of a group runs.
    expect(lucky / groups).toBeGreaterThan(0.95);
  });
});
