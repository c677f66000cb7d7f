import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  compareGroups,
  detectableDifference,
  fisherExact,
  fisherPower,
  holm,
} from '../src/stats.js';

const PYTHON = '/usr/bin/python3';
const hasScipy = spawnSync(PYTHON, ['-c', 'import scipy.stats']).status === 0;

describe('compareGroups', () => {
  it('hand-computed: all successes against all failures, three seeds each', () => {
    const d = compareGroups([1, 1, 1], [0, 0, 0], { seed: 1 });
    // Every resample has means 1 and 0; 2 of the C(6,3) = 20 splits are as extreme (both ways).
    expect(d).toEqual({ diff: 1, low: 1, high: 1, p: 0.1, exact: true });
  });

  it('hand-computed: distinct values, two seeds each', () => {
    // Splits of {3, 5, 1, 2} into pairs: |4 − 1.5| = 2.5 for {3,5} and {1,2}; the other four
    // give 1.5, 0.5, 0.5 and 1.5. p = 2/6.
    const d = compareGroups([3, 5], [1, 2], { seed: 2 });
    expect(d.diff).toBe(2.5);
    expect(d.p).toBeCloseTo(1 / 3, 12);
    expect(d.exact).toBe(true);
    // Bootstrap: mean(a) ∈ {3, 4, 5} w.p. ¼, ½, ¼; mean(b) ∈ {1, 1.5, 2} likewise: the
    // difference ranges over [1, 4], and its 2.5% and 97.5% quantiles are 1 and 4.
    expect(d.low).toBe(1);
    expect(d.high).toBe(4);
  });

  it('one success in two seeds against none: the difference is not significant (p = 1)', () => {
    const d = compareGroups([0, 1], [0, 0], { seed: 3 });
    expect(d.diff).toBe(0.5);
    expect(d.p).toBe(1);
    expect([d.low, d.high]).toEqual([0, 1]);
  });

  it('random permutations agree with the exact test; the same seed gives the same numbers', () => {
    const a = [0.77, 0.77, 0, 0.77, 0.61, 0.77];
    const b = [0.77, 0, 0, 0.77, 0, 0];
    const exact = compareGroups(a, b, { seed: 4 });
    expect(exact.exact).toBe(true);
    const mc = compareGroups(a, b, { seed: 4, exactLimit: 0, resamples: 20_000 });
    expect(mc.exact).toBe(false);
    expect(Math.abs(mc.p - exact.p)).toBeLessThan(0.02);
    expect(compareGroups(a, b, { seed: 4, exactLimit: 0 })).toEqual(
      compareGroups(a, b, { seed: 4, exactLimit: 0 }),
    );
    expect(exact.low).toBeLessThanOrEqual(exact.diff);
    expect(exact.high).toBeGreaterThanOrEqual(exact.diff);
  });

  it('refuses an empty group or a non-finite value, naming the group', () => {
    expect(() => compareGroups([], [1], { seed: 1 })).toThrow(/group a is empty/);
    expect(() => compareGroups([1], [Number.NaN], { seed: 1 })).toThrow(
      /group b holds a non-finite/,
    );
  });
});

describe('the exact permutation test', () => {
  it('enumerates up to a million splits: 10 against 10 seeds (184,756 splits) is exact', () => {
    const a = [0.77, 0.77, 0, 0.77, 0.61, 0.77, 0, 0, 0.5, 0.77];
    const b = [0, 0, 0.77, 0, 0, 0, 0.61, 0, 0, 0];
    const d = compareGroups(a, b, { seed: 5 });
    expect(d.exact).toBe(true);
    // Every p-value over all 184,756 splits is a multiple of 1/184,756.
    expect(Math.abs(d.p * 184_756 - Math.round(d.p * 184_756))).toBeLessThan(1e-6);
    // Above the limit it samples: 13 against 13 seeds have 10,400,600 splits.
    const big = compareGroups([...a, 1, 1, 1], [...b, 0, 0, 0], { seed: 5 });
    expect(big.exact).toBe(false);
  });

  it('an exact p-value by full enumeration: {1, 2} against {3, 4}', () => {
    // The six splits of {1, 2, 3, 4} into pairs have |difference of means| 2, 1, 0, 0, 1, 2
    // ({1,2}|{3,4}, {1,3}|{2,4}, {1,4}|{2,3}, {2,3}|{1,4}, {2,4}|{1,3}, {3,4}|{1,2}): two of six
    // are as extreme as the observed 2.
    const d = compareGroups([1, 2], [3, 4], { seed: 1 });
    expect(d.exact).toBe(true);
    expect(d.p).toBeCloseTo(2 / 6, 12);
  });
});

describe('holm', () => {
  it('adjusts a known vector (step-down, monotone, capped at 1)', () => {
    // Sorted: 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → 0.06 by
    // monotonicity); back in the input's order.
    const q = holm([0.01, 0.04, 0.03, 0.005]);
    expect(q[0]).toBeCloseTo(0.03, 12);
    expect(q[1]).toBeCloseTo(0.06, 12);
    expect(q[2]).toBeCloseTo(0.06, 12);
    expect(q[3]).toBeCloseTo(0.02, 12);
    expect(holm([0.5, 0.9])).toEqual([1, 1]);
    expect(holm([])).toEqual([]);
    expect(holm([0.2])).toEqual([0.2]);
  });

  it('never lowers a p-value and refuses one outside [0, 1]', () => {
    const ps = [0.001, 0.2, 0.049, 0.3, 0.0001, 0.5];
    const q = holm(ps);
    for (let i = 0; i < ps.length; i++) expect(q[i]).toBeGreaterThanOrEqual(ps[i]!);
    expect(() => holm([0.1, 1.5])).toThrow(/1.5 is not in \[0, 1\]/);
    expect(() => holm([Number.NaN])).toThrow(/not in/);
  });
});

describe('fisherExact', () => {
  it('a 2 × 2 by hand: 3 of 4 against 1 of 4', () => {
    // Margins 4 successes of 8: P(k successes in a) = C(4,k)·C(4,4−k)/C(8,4) = 1, 16, 36, 16, 1
    // (/70); the tables no likelier than k = 3 (16/70) are k = 0, 1, 3, 4: p = 34/70.
    expect(fisherExact({ successes: 3, of: 4 }, { successes: 1, of: 4 })).toBeCloseTo(34 / 70, 12);
    // All against none, 3 each: only the two extreme tables, each 1/C(6,3) = 1/20.
    expect(fisherExact({ successes: 3, of: 3 }, { successes: 0, of: 3 })).toBeCloseTo(0.1, 12);
    expect(fisherExact({ successes: 2, of: 5 }, { successes: 2, of: 5 })).toBeCloseTo(1, 12);
  });

  it('refuses impossible counts, naming the group', () => {
    expect(() => fisherExact({ successes: 4, of: 3 }, { successes: 0, of: 3 })).toThrow(
      /group a has 4 successes out of 3/,
    );
    expect(() => fisherExact({ successes: 0, of: 3 }, { successes: 0, of: 0 })).toThrow(
      /group b needs a whole size/,
    );
  });
});

describe("power of Fisher's test", () => {
  it('by hand: 1 against 1 seed can never reject at 5%, so its power is 0', () => {
    expect(fisherPower(1, 1, 0, 1)).toBe(0);
    expect(detectableDifference(1, 1)).toBeNull();
  });

  it('by hand: 3 against 3 rejects only 3/3 vs 0/3 (p = 0.1 > 0.05), 4 against 4 only 4/4 vs 0/4 (p = 1/35)', () => {
    expect(fisherPower(3, 3, 0, 1)).toBe(0);
    // Power at rates r and 1 − r: P(a = 0)·P(b = 4) + P(a = 4)·P(b = 0).
    const r = 0.2;
    expect(fisherPower(4, 4, r, 1 - r)).toBeCloseTo((1 - r) ** 8 + r ** 8, 12);
  });

  it('grows with the seeds, and the detectable difference shrinks', () => {
    expect(fisherPower(30, 30, 0.3, 0.7)).toBeGreaterThan(fisherPower(10, 10, 0.3, 0.7));
    const d10 = detectableDifference(10, 10)!;
    const d30 = detectableDifference(30, 30)!;
    expect(d30).toBeLessThan(d10);
    // The smallest Δ reaching 80%: Δ − 0.01 does not.
    expect(fisherPower(30, 30, 0.5 - d30 / 2, 0.5 + d30 / 2)).toBeGreaterThanOrEqual(0.8);
    expect(fisherPower(30, 30, 0.5 - (d30 - 0.01) / 2, 0.5 + (d30 - 0.01) / 2)).toBeLessThan(0.8);
  });

  it('agrees with SciPy (fisher_exact and binomial sums) on a grid', () => {
    if (process.env.CI) expect(hasScipy, `${PYTHON} lacks scipy under CI`).toBe(true);
    if (!hasScipy) return;
    const tables: [number, number, number, number][] = [
      [3, 10, 7, 10],
      [0, 10, 6, 10],
      [12, 30, 22, 30],
      [5, 6, 1, 9],
      [17, 40, 17, 40],
    ];
    const powers: [number, number, number, number][] = [
      [10, 10, 0.3, 0.7],
      [30, 30, 0.3, 0.7],
      [10, 10, 0.1, 0.9],
      [6, 9, 0.2, 0.75],
    ];
    const code = `
import json, sys
from scipy.stats import fisher_exact, binom
tables, powers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ps = [fisher_exact([[x, n - x], [y, m - y]])[1] for x, n, y, m in tables]
def power(n, m, a, b):
    total = 0.0
    for x in range(n + 1):
        for y in range(m + 1):
            if fisher_exact([[x, n - x], [y, m - y]])[1] <= 0.05:
                total += binom.pmf(x, n, a) * binom.pmf(y, m, b)
    return total
print(json.dumps([ps, [power(*p) for p in powers]]))
`;
    const run = spawnSync(PYTHON, ['-c', code, JSON.stringify(tables), JSON.stringify(powers)], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const [ps, pw] = JSON.parse(run.stdout) as [number[], number[]];
    for (const [i, [x, n, y, m]] of tables.entries())
      expect(fisherExact({ successes: x, of: n }, { successes: y, of: m })).toBeCloseTo(ps[i]!, 10);
    for (const [i, [n, m, a, b]] of powers.entries())
      expect(fisherPower(n, m, a, b)).toBeCloseTo(pw[i]!, 10);
  }, 60_000);
});
