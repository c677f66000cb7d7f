// `criticError` (RMSE, bias, Spearman's ρ of a critic against exact values) and
// `spearmanCorrelation`, by hand and by property.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { averageRanks, criticError, prefixValues, spearmanCorrelation } from '../src/index.js';

describe('criticError by hand', () => {
  // A rollout chose A = [5, 7, 9] and C = [6, 1] of the labels A, B = [5, 7, 4], C with
  // π = (0.5, 0.3, 0.2) and Q^π = (1, 0.2, −0.5). The exact values before each token:
  //   A: 0.46, 0.7, 0.7   C: 0.46, −0.5   (see prefixValues.test.ts)
  const ids = [Int32Array.of(5, 7, 9), Int32Array.of(5, 7, 4), Int32Array.of(6, 1)];
  const pi = [0.5, 0.3, 0.2];
  const q = [1, 0.2, -0.5];
  const exact = [
    ...prefixValues(ids, pi, q, 0).subarray(0, 3),
    ...prefixValues(ids, pi, q, 2).subarray(0, 2),
  ];
  const critic = [0.5, 0.6, 0.9, 0.4, -0.5];

  it('RMSE, bias and Spearman’s ρ of the pooled prefixes', () => {
    // V − V^π = (0.04, −0.1, 0.2, −0.06, 0): bias = 0.08/5 = 0.016,
    // RMSE = √((0.0016 + 0.01 + 0.04 + 0.0036 + 0)/5) = √0.01104 = 0.105071404…
    // Ranks: critic (3, 4, 5, 2, 1); exact (2.5, 4.5, 4.5, 2.5, 1) (two ties), mean 3:
    // Σ dx·dy = 0 + 1.5 + 3 + 0.5 + 4 = 9, Σ dx² = 10, Σ dy² = 9 → ρ = 9/√90 = 0.948683298…
    const e = criticError(critic, exact);
    expect(e.count).toBe(5);
    expect(e.skipped).toBe(0);
    expect(e.bias).toBeCloseTo(0.016, 14);
    expect(e.rmse).toBeCloseTo(Math.sqrt(0.01104), 14);
    expect(e.spearman).toBeCloseTo(9 / Math.sqrt(90), 14);
  });

  it('the bias is the critic minus the exact value: swapping the arguments flips its sign', () => {
    const e = criticError(exact, critic);
    expect(e.bias).toBeCloseTo(-0.016, 14);
    expect(e.rmse).toBeCloseTo(Math.sqrt(0.01104), 14);
    // An over-valuing critic has a positive bias.
    expect(
      criticError(
        exact.map((x) => x + 0.25),
        exact,
      ).bias,
    ).toBeCloseTo(0.25, 14);
  });

  it('a prefix off by one shows: the critic that reads each value one token late has error', () => {
    // Reading A's values one token late gives (0.46, 0.46, 0.7) instead of (0.46, 0.7, 0.7).
    const late = [exact[0]!, exact[0]!, exact[1]!, exact[3]!, exact[3]!];
    const e = criticError(late, exact);
    expect(e.rmse).toBeGreaterThan(0.1);
    expect(criticError(exact, exact)).toEqual({
      count: 5,
      skipped: 0,
      rmse: 0,
      bias: 0,
      spearman: 1,
    });
  });

  it('leaves out positions whose exact value is undefined (NaN) and counts them', () => {
    const e = criticError([1, 2, 3, 100], [1, 2, 4, Number.NaN]);
    expect(e.count).toBe(3);
    expect(e.skipped).toBe(1);
    expect(e.bias).toBeCloseTo(-1 / 3, 14);
    expect(e.spearman).toBe(1);
    const none = criticError([1], [Number.NaN]);
    expect([none.count, none.skipped]).toEqual([0, 1]);
    expect(none.rmse).toBeNaN();
    expect(none.bias).toBeNaN();
    expect(none.spearman).toBeNaN();
  });

  it('exact values that differ only by rounding tie; tieGrid 0 ranks them as given', () => {
    const critic3 = [1, 2, 3];
    const exact3 = [0.1 + 0.2, 0.3, 0.5]; // 0.30000000000000004 and 0.3
    expect(criticError(critic3, exact3).spearman).toBeCloseTo(Math.sqrt(3) / 2, 14);
    expect(criticError(critic3, exact3, { tieGrid: 0 }).spearman).toBeCloseTo(0.5, 14);
  });

  it('refuses mismatched lengths, non-finite critic values and infinite exact ones', () => {
    expect(() => criticError([1, 2], [1])).toThrow(/`exact` has 1 entries but `critic` has 2/);
    expect(() => criticError([1, Number.NaN], [1, 2])).toThrow(/`critic\[1\]` is NaN/);
    expect(() => criticError([1, 2], [1, Number.POSITIVE_INFINITY])).toThrow(
      /`exact\[1\]` is Infinity/,
    );
    expect(() => criticError([1], [1], { tieGrid: -1 })).toThrow(/`options.tieGrid`/);
    expect(() => criticError(null as unknown as number[], [])).toThrow(TypeError);
  });
});

describe('spearmanCorrelation', () => {
  it('by hand, with ties at average ranks', () => {
    expect(Array.from(averageRanks([3, 1, 4, 1, 5]))).toEqual([3, 1.5, 4, 1.5, 5]);
    // x = [3, 1, 4, 1, 5] → [3, 1.5, 4, 1.5, 5]; y = [9, 2, 6, 5, 3] → [5, 1, 4, 3, 2]; mean 3:
    // Σdx·dy = 0 + 3 + 1 + 0 − 2 = 2, Σdx² = 9.5, Σdy² = 10 → 2/√95
    expect(spearmanCorrelation([3, 1, 4, 1, 5], [9, 2, 6, 5, 3])).toBeCloseTo(
      2 / Math.sqrt(95),
      15,
    );
    expect(spearmanCorrelation([1, 2, 3], [3, 2, 1])).toBe(-1);
    expect(spearmanCorrelation([1], [1])).toBeNaN();
    expect(spearmanCorrelation([1, 1], [1, 2])).toBeNaN();
    expect(() => spearmanCorrelation([1, 2], [1])).toThrow(/`ys` has 1 entries but `xs` has 2/);
  });

  it('is invariant under increasing maps and flips under a decreasing one; criticError’s ρ is it', () => {
    const series = fc
      .integer({ min: 2, max: 30 })
      .chain((n) =>
        fc.tuple(
          fc.array(fc.integer({ min: -5, max: 5 }), { minLength: n, maxLength: n }),
          fc.array(fc.integer({ min: -5, max: 5 }), { minLength: n, maxLength: n }),
        ),
      );
    fc.assert(
      fc.property(series, ([xs, ys]) => {
        const rho = spearmanCorrelation(xs, ys);
        const mapped = spearmanCorrelation(
          xs.map((x) => Math.exp(x)),
          ys.map((y) => 3 * y - 1),
        );
        const flipped = spearmanCorrelation(
          xs.map((x) => -x),
          ys,
        );
        if (Number.isNaN(rho)) {
          expect(mapped).toBeNaN();
          return;
        }
        expect(mapped).toBeCloseTo(rho, 12);
        expect(flipped).toBeCloseTo(-rho, 12);
        expect(criticError(xs, ys).spearman).toBeCloseTo(rho, 12);
      }),
      { numRuns: 300 },
    );
  });
});
