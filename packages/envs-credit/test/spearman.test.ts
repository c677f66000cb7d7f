import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CreditArgumentError } from '../src/errors.js';
import { averageRanks, spearman } from '../src/spearman.js';

describe('spearman', () => {
  it('is 1 for a monotone increasing relation and −1 for a decreasing one', () => {
    expect(spearman([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(spearman([1, 2, 3, 4], [1, 8, 27, 1000])).toBe(1);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
  });

  it('gives ties the average of their ranks', () => {
    expect(Array.from(averageRanks([3, 1, 4, 1, 5]))).toEqual([3, 1.5, 4, 1.5, 5]);
    expect(Array.from(averageRanks([2, 2, 2]))).toEqual([2, 2, 2]);
    // ranks x = [1, 2.5, 2.5, 4], y = [1, 2, 3, 4], mean 2.5:
    // Σdx·dy = 2.25 + 0 + 0 + 2.25 = 4.5, Σdx² = 4.5, Σdy² = 5 → 4.5/√22.5 = 3/√10
    expect(spearman([1, 2, 2, 3], [1, 2, 3, 4])).toBeCloseTo(3 / Math.sqrt(10), 15);
    // x = [3, 1, 4, 1, 5] → [3, 1.5, 4, 1.5, 5]; y = [9, 2, 6, 5, 3] → [5, 1, 4, 3, 2]; mean 3:
    // Σdx·dy = 0 + 3 + 1 + 0 − 2 = 2, Σdx² = 9.5, Σdy² = 10 → 2/√95
    expect(spearman([3, 1, 4, 1, 5], [9, 2, 6, 5, 3])).toBeCloseTo(2 / Math.sqrt(95), 15);
  });

  it('is NaN with fewer than two pairs or when either side is constant', () => {
    expect(spearman([], [])).toBeNaN();
    expect(spearman([1], [2])).toBeNaN();
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(spearman([1, 2, 3], [0.5, 0.5, 0.5])).toBeNaN();
    expect(spearman(new Float64Array([1, 2]), new Float64Array([2, 1]))).toBe(-1);
  });

  it('refuses series of different lengths and non-finite entries, naming them', () => {
    expect(() => spearman([1, 2], [1])).toThrow(CreditArgumentError);
    expect(() => spearman([1, 2], [1])).toThrow(/spearman\(ys\): has 1 entries but xs has 2/);
    expect(() => spearman([1, Number.NaN], [1, 2])).toThrow(/spearman\(xs\): entry 1 is NaN/);
    expect(() => spearman([1, 2], [1, Number.POSITIVE_INFINITY])).toThrow(/spearman\(ys\)/);
    expect(() => spearman(null as unknown as number[], [])).toThrow(CreditArgumentError);
  });

  const pairs = fc
    .integer({ min: 2, max: 30 })
    .chain((n) =>
      fc.tuple(
        fc.array(fc.integer({ min: -5, max: 5 }), { minLength: n, maxLength: n }),
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: n, maxLength: n }),
      ),
    );

  it('is symmetric, in [−1, 1], flips sign with one side, and ignores strictly increasing maps', () => {
    fc.assert(
      fc.property(pairs, ([xs, ys]) => {
        const r = spearman(xs, ys);
        const same = (a: number, b: number) =>
          Number.isNaN(a) ? expect(b).toBeNaN() : expect(a).toBeCloseTo(b, 12);
        same(spearman(ys, xs), r);
        same(
          spearman(
            xs.map((x) => -x),
            ys,
          ),
          Number.isNaN(r) ? r : -r,
        );
        // (x³ + 2x on integers; scaling by 8 is exact, so it keeps distinct doubles distinct)
        same(
          spearman(
            xs.map((x) => x ** 3 + 2 * x),
            ys.map((y) => 8 * y),
          ),
          r,
        );
        if (!Number.isNaN(r)) expect(Math.abs(r)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('without ties equals 1 − 6·Σd²/(n(n² − 1))', () => {
    const distinct = fc
      .integer({ min: 2, max: 30 })
      .chain((n) =>
        fc.tuple(
          fc.shuffledSubarray([...Array(60).keys()], { minLength: n, maxLength: n }),
          fc.shuffledSubarray([...Array(60).keys()], { minLength: n, maxLength: n }),
        ),
      );
    fc.assert(
      fc.property(distinct, ([xs, ys]) => {
        const rx = averageRanks(xs);
        const ry = averageRanks(ys);
        const n = xs.length;
        const d2 = xs.reduce((acc, _, i) => acc + (rx[i]! - ry[i]!) ** 2, 0);
        expect(spearman(xs, ys)).toBeCloseTo(1 - (6 * d2) / (n * (n * n - 1)), 12);
      }),
      { numRuns: 300 },
    );
  });
});
