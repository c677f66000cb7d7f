// Monte Carlo returns of a fixed random policy, played in the environments, against the exact
// values. Everything is seeded, so the test is deterministic.
import { createRng, deriveSeed, type Rng } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createCreditEnv } from '../src/env.js';
import { outcomeCredit } from '../src/outcome-credit.js';
import { policyAdvantages } from '../src/policy.js';
import type { LabelPolicy } from '../src/policy-input.js';
import { CREDIT_TASKS, creditMdp } from '../src/tasks.js';

/** A fixed policy: for each state, weights drawn uniformly in [0.1, 1] and normalised. */
function randomPolicy(task: string, seed: number): LabelPolicy {
  const rng = createRng(seed);
  const table = new Map<string, number[]>();
  for (const st of creditMdp(task).states) {
    const w = st.actions.map(() => 0.1 + 0.9 * rng.float());
    const total = w.reduce((a, b) => a + b, 0);
    table.set(
      st.id,
      w.map((x) => x / total),
    );
  }
  return (stateId) => table.get(stateId)!;
}

function sample(rng: Rng, probs: ArrayLike<number>): number {
  const u = rng.float();
  let total = 0;
  for (let a = 0; a < probs.length; a++) {
    total += probs[a]!;
    if (u < total) return a;
  }
  return probs.length - 1;
}

interface Episode {
  /** Discounted return (the logged one). */
  discounted: number;
  /** Undiscounted return. */
  total: number;
  /** (state, label) of every step. */
  steps: [string, string][];
}

/**
 * Plays `episodes` episodes with `pi`. The step limit is raised to 200 so that it almost never
 * cuts an episode: the values are those of episodes that run to their end.
 */
function play(task: string, pi: LabelPolicy, episodes: number, seed: number): Episode[] {
  const env = createCreditEnv(task, { maxSteps: 200 });
  const rng = createRng(seed);
  const out: Episode[] = [];
  for (let e = 0; e < episodes; e++) {
    let step = env.resetSync({ seed: deriveSeed(seed, e) });
    const ep: Episode = { discounted: 0, total: 0, steps: [] };
    while (!step.terminated && !step.truncated) {
      const state = step.info.state as string;
      const labels = step.actions!;
      const label = labels[sample(rng, pi(state, labels) as ArrayLike<number>)]!;
      ep.steps.push([state, label]);
      step = env.stepSync(label);
      ep.total += step.reward;
    }
    ep.discounted = step.info.discountedReturn as number;
    out.push(ep);
  }
  return out;
}

/**
 * Hoeffding: n independent returns in [0, 1] (every task's discounted return lies there) have a
 * mean within t = sqrt(ln(2/δ)/(2n)) of its expectation with probability ≥ 1 − δ. δ = 1e-6 per
 * comparison. The step limit of 200 cuts the tail of an episode only after 200 steps, which
 * changes its expected return by at most γ^200·max|V| ≤ 0.95^200 < 4e-5; both go into the
 * tolerance.
 */
function tolerance(n: number): number {
  return Math.sqrt(Math.log(2 / 1e-6) / (2 * n)) + 0.95 ** 200;
}

const EPISODES = 40_000;

describe('Monte Carlo returns of a fixed random policy match V^π and Q^π', () => {
  it.each(CREDIT_TASKS)('%s', (task) => {
    const pi = randomPolicy(task, 7);
    const exact = policyAdvantages(task, pi);
    const mdp = creditMdp(task);
    const episodes = play(task, pi, EPISODES, 11);
    const mean = episodes.reduce((a, ep) => a + ep.discounted, 0) / episodes.length;
    expect(Math.abs(mean - exact.v[mdp.start]!)).toBeLessThanOrEqual(tolerance(EPISODES));
    // Grouped by the first label: the mean return estimates Q^π(start, label).
    for (const act of mdp.states.find((s) => s.id === mdp.start)!.actions) {
      const group = episodes.filter((ep) => ep.steps[0]![1] === act.label);
      const q = group.reduce((a, ep) => a + ep.discounted, 0) / group.length;
      expect(Math.abs(q - exact.q[mdp.start]![act.label]!), act.label).toBeLessThanOrEqual(
        tolerance(group.length),
      );
    }
  });
});

describe('Monte Carlo outcome-only credit matches outcomeCredit', () => {
  it.each(['loop', 'loop-long', 'delayed', 'risky'])('%s', (task) => {
    const pi = randomPolicy(task, 3);
    const exact = outcomeCredit(task, pi);
    const episodes = play(task, pi, EPISODES, 5);
    const meanR = episodes.reduce((a, ep) => a + ep.total, 0) / episodes.length;
    expect(Math.abs(meanR - exact.meanReturn)).toBeLessThanOrEqual(
      // undiscounted returns of these tasks lie in [0, 1]
      tolerance(EPISODES),
    );
    // Per (state, label): the ratio Σ_e n_e·R_e / Σ_e n_e (n_e: occurrences in episode e)
    // estimates E[R | an occurrence]. Its standard error by the delta method is
    // sqrt(Σ_e n_e²·(R_e − ρ)²) / Σ_e n_e; we accept 6 standard errors. It is compared with the
    // exact credit + E[R], so the sampling error of the mean return does not enter.
    const sums = new Map<string, { n: number; nr: number; rows: [number, number][] }>();
    for (const ep of episodes) {
      const counts = new Map<string, number>();
      for (const [s, a] of ep.steps) counts.set(`${s}\n${a}`, (counts.get(`${s}\n${a}`) ?? 0) + 1);
      for (const [key, n] of counts) {
        const acc = sums.get(key) ?? { n: 0, nr: 0, rows: [] };
        acc.n += n;
        acc.nr += n * ep.total;
        acc.rows.push([n, ep.total]);
        sums.set(key, acc);
      }
    }
    let checked = 0;
    for (const [key, acc] of sums) {
      if (acc.rows.length < 500) continue;
      const [s, a] = key.split('\n') as [string, string];
      const rho = acc.nr / acc.n;
      const se = Math.sqrt(acc.rows.reduce((t, [n, r]) => t + n * n * (r - rho) ** 2, 0)) / acc.n;
      const want = exact.credit[s]![a]! + exact.meanReturn;
      expect(Math.abs(rho - want), key).toBeLessThanOrEqual(6 * se + 1e-9); // (+ rounding where R is certain)
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});
