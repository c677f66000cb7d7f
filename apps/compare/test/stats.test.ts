import { describe, expect, it } from 'vitest';
import { compareGroups } from '../src/stats.js';

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
