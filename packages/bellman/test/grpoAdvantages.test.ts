import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grpoAdvantages } from '../src/grpoAdvantages.js';
import {
  EPS,
  expectWithin,
  groupTol,
  maxAbs,
  normaliseArb,
  RUNS,
  refNormalise,
  returnsArb,
  stats,
  U,
} from './groups.js';

describe('grpoAdvantages by hand', () => {
  it('three episodes with returns 1, 0.5, 0', () => {
    // mean = 1.5/3 = 0.5, deviations (0.5, 0, −0.5).
    expectWithin(grpoAdvantages([1, 0.5, 0], { normalise: 'none' }), [0.5, 0, -0.5], 1e-15);
    // Population variance (0.25 + 0 + 0.25)/3 = 1/6, std = 0.4082482905;
    // 0.5/(0.4082482905 + 1e-6) = 1.2247418714.
    const a = grpoAdvantages([1, 0.5, 0], { normalise: 'std' });
    expectWithin(a, [1.2247418714, 0, -1.2247418714], 1e-10);
    expect(a[0]).toBeCloseTo(0.5 / (Math.sqrt(1 / 6) + 1e-6), 15);
  });

  it('one success out of four', () => {
    // mean = 0.25, deviations (0.75, −0.25, −0.25, −0.25).
    expectWithin(
      grpoAdvantages([1, 0, 0, 0], { normalise: 'none' }),
      [0.75, -0.25, -0.25, -0.25],
      1e-15,
    );
    // variance (0.5625 + 3·0.0625)/4 = 0.1875, std = √0.1875 = 0.4330127019, + ε = 0.4330137019;
    // 0.75/0.4330137019 = 1.7320468076, 0.25/0.4330137019 = 0.5773489359.
    expectWithin(
      grpoAdvantages([1, 0, 0, 0], { normalise: 'std' }),
      [1.7320468076, -0.5773489359, -0.5773489359, -0.5773489359],
      1e-10,
    );
  });

  it('two episodes: ±1 over std 1 + ε', () => {
    // mean 2, deviations ±1, std 1: 1/(1 + 1e-6) = 0.999999000000999999.
    expectWithin(
      grpoAdvantages([3, 1], { normalise: 'std' }),
      [0.999999000001, -0.999999000001],
      1e-15,
    );
    expectWithin(grpoAdvantages(new Float64Array([3, 1]), { normalise: 'none' }), [1, -1], 0);
  });

  it('a group of one gets 0 in both modes (its return is the mean; 0/(0 + ε) = 0)', () => {
    for (const normalise of ['std', 'none'] as const) {
      expect(Array.from(grpoAdvantages([7.5], { normalise }))).toEqual([0]);
    }
  });

  it('equal returns give exactly 0, even where Σ/G rounds (0.1 + 0.1 + 0.1 = 0.30000000000000004)', () => {
    // A plain mean would be 0.10000000000000002 and give −1.4e-17, or −1.4e-11 over std + ε.
    for (const normalise of ['std', 'none'] as const) {
      for (const a of grpoAdvantages([0.1, 0.1, 0.1], { normalise })) expect(a).toBe(0);
    }
  });
});

describe('properties of grpoAdvantages', () => {
  it('equals the textbook (R − mean)/(std + ε) and R − mean', () => {
    fc.assert(
      fc.property(returnsArb(), normaliseArb, (R, normalise) => {
        const a = grpoAdvantages(R, { normalise });
        expect(a).toBeInstanceOf(Float64Array);
        expectWithin(
          a,
          refNormalise(R, normalise),
          groupTol(R.length, maxAbs(R), stats(R).std, normalise),
        );
      }),
      RUNS,
    );
  });

  it('shift invariance: R + c gives the same advantages in both modes', () => {
    fc.assert(
      fc.property(
        returnsArb(),
        fc.double({ min: -1e4, max: 1e4, noNaN: true }),
        normaliseArb,
        (R, c, normalise) => {
          const shifted = R.map((x) => x + c);
          // Both results are within the rounding bound of the values they were computed from, and
          // R + c itself is rounded to u·(max|R| + |c|): the bound at that magnitude, twice.
          const tol = 2 * groupTol(R.length, maxAbs(R) + Math.abs(c), stats(R).std, normalise);
          expectWithin(
            grpoAdvantages(shifted, { normalise }),
            grpoAdvantages(R, { normalise }),
            tol,
          );
        },
      ),
      RUNS,
    );
  });

  it("scale with 'none': R·a gives a times the advantages", () => {
    fc.assert(
      fc.property(returnsArb(), fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (R, a) => {
        const scaled = grpoAdvantages(
          R.map((x) => x * a),
          { normalise: 'none' },
        );
        const expected = Array.from(grpoAdvantages(R, { normalise: 'none' }), (x) => x * a);
        expectWithin(scaled, expected, 2 * groupTol(R.length, maxAbs(R) * a, 0, 'none'));
      }),
      RUNS,
    );
  });

  it("scale with 'std': R·a (a > 0) gives d/(s + ε/a), the same advantages but for ε", () => {
    fc.assert(
      fc.property(returnsArb(), fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (R, a) => {
        const scaled = grpoAdvantages(
          R.map((x) => x * a),
          { normalise: 'std' },
        );
        // (aR_i − a·mean)/(a·s + ε) = d_i/(s + ε/a): ε shrinks by a, nothing else changes.
        const { mean, std } = stats(R);
        const expected = R.map((x) => (x - mean) / (std + EPS / a));
        const tol =
          (2 * (8 * (R.length + 1) * U * maxAbs(R) * (1 + Math.sqrt(R.length)))) / (std + EPS / a);
        expectWithin(scaled, expected, tol + 1e-300);
      }),
      RUNS,
    );
  });

  it("scale with 'std' and spreads large against ε: the same advantages to √G·ε·|1 − 1/a|/s", () => {
    const spread = fc
      .array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 2, maxLength: 16 })
      .filter((R) => stats(R).std >= 1);
    fc.assert(
      fc.property(spread, fc.double({ min: 1e-2, max: 1e2, noNaN: true }), (R, a) => {
        const { std } = stats(R);
        // |d/(s + ε/a) − d/(s + ε)| <= |d|·ε·|1 − 1/a|/s², and |d_i| <= √G·s.
        const epsEffect = (Math.sqrt(R.length) * EPS * Math.abs(1 - 1 / a)) / std;
        const tol = epsEffect + 2 * groupTol(R.length, maxAbs(R) * Math.max(a, 1), std, 'std');
        expect(epsEffect).toBeLessThan(1e-3);
        expectWithin(
          grpoAdvantages(
            R.map((x) => x * a),
            { normalise: 'std' },
          ),
          grpoAdvantages(R, { normalise: 'std' }),
          tol,
        );
      }),
      RUNS,
    );
  });

  it('the advantages sum to 0 (up to rounding) in both modes', () => {
    fc.assert(
      fc.property(returnsArb(), normaliseArb, (R, normalise) => {
        const a = grpoAdvantages(R, { normalise });
        let sum = 0;
        for (const x of a) sum += x;
        // Each entry is off by at most groupTol from an exactly centred vector, plus the sum's own
        // rounding.
        const tol =
          R.length * groupTol(R.length, maxAbs(R), stats(R).std, normalise) +
          R.length * U * R.length * maxAbs(a);
        expect(Math.abs(sum)).toBeLessThanOrEqual(tol);
      }),
      RUNS,
    );
  });

  it("'std' gives population variance s²/(s + ε)² (1 when s ≫ ε)", () => {
    fc.assert(
      fc.property(returnsArb(2), (R) => {
        const { std } = stats(R);
        const a = grpoAdvantages(R, { normalise: 'std' });
        let ss = 0;
        for (const x of a) ss += x * x;
        expect(ss / R.length).toBeCloseTo((std / (std + EPS)) ** 2, 9);
      }),
      RUNS,
    );
  });

  it('equal returns give exactly 0 for any group size and value, in both modes', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.integer({ min: 1, max: 64 }),
        normaliseArb,
        (x, G, normalise) => {
          for (const a of grpoAdvantages(new Array(G).fill(x), { normalise }))
            expect(a === 0).toBe(true);
        },
      ),
      RUNS,
    );
  });
});

describe('grpoAdvantages refuses bad input with a typed error naming it', () => {
  const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
    [
      'an empty group',
      () => grpoAdvantages([], { normalise: 'std' }),
      RangeError,
      /`returns` has 0 entries.*at least one episode.*e\.g\. grpoAdvantages\(\[1, 0, 0\.5\], \{ normalise: 'std' \}\)/,
    ],
    [
      'returns not an array',
      () => grpoAdvantages(3 as never, { normalise: 'std' }),
      TypeError,
      /`returns` must be an array/,
    ],
    [
      'returns null',
      () => grpoAdvantages(null as never, { normalise: 'std' }),
      TypeError,
      /`returns`.*got null/,
    ],
    [
      'a NaN return',
      () => grpoAdvantages([1, Number.NaN], { normalise: 'std' }),
      RangeError,
      /`returns\[1\]` must be finite/,
    ],
    [
      'an infinite return',
      () => grpoAdvantages([Number.POSITIVE_INFINITY], { normalise: 'none' }),
      RangeError,
      /`returns\[0\]` must be finite/,
    ],
    [
      'a string return',
      () => grpoAdvantages(['1'] as never, { normalise: 'none' }),
      TypeError,
      /`returns\[0\]` must be a number/,
    ],
    [
      'no options',
      () => grpoAdvantages([1, 0], undefined as never),
      TypeError,
      /`options` must be an object like \{ normalise: 'std' \}/,
    ],
    [
      'an unknown normalisation',
      () => grpoAdvantages([1, 0], { normalise: 'mean' as never }),
      TypeError,
      /`options\.normalise` must be 'std'.*or 'none'.*got 'mean'/,
    ],
    [
      'a missing normalisation',
      () => grpoAdvantages([1, 0], {} as never),
      TypeError,
      /`options\.normalise`.*got undefined/,
    ],
  ];
  for (const [name, fn, type, message] of cases) {
    it(name, () => {
      expect(fn).toThrow(type);
      expect(fn).toThrow(message);
    });
  }
});
