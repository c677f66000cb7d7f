import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grpoAdvantages } from '../src/grpoAdvantages.js';
import { rlooAdvantages } from '../src/rlooAdvantages.js';
import { expectWithin, groupTol, maxAbs, RUNS, returnsArb, stats, U } from './groups.js';

/** R_i minus the mean of the other returns, straight from the definition. */
function leaveOneOut(R: readonly number[]): number[] {
  return R.map((x, i) => {
    let others = 0;
    R.forEach((y, j) => {
      if (j !== i) others += y;
    });
    return x - others / (R.length - 1);
  });
}

describe('rlooAdvantages by hand', () => {
  it('three episodes with returns 1, 0.5, 0', () => {
    // A_0 = 1 − (0.5 + 0)/2 = 0.75, A_1 = 0.5 − (1 + 0)/2 = 0, A_2 = 0 − (1 + 0.5)/2 = −0.75.
    expectWithin(rlooAdvantages([1, 0.5, 0]), [0.75, 0, -0.75], 1e-15);
  });

  it('one success out of four', () => {
    // A_0 = 1 − 0/3 = 1; each failure: 0 − (1 + 0 + 0)/3 = −1/3.
    expectWithin(rlooAdvantages([1, 0, 0, 0]), [1, -1 / 3, -1 / 3, -1 / 3], 1e-15);
  });

  it('two episodes: each is compared with the other', () => {
    // A_0 = 3 − 1 = 2, A_1 = 1 − 3 = −2.
    expectWithin(rlooAdvantages(new Float64Array([3, 1])), [2, -2], 0);
  });
});

describe('properties of rlooAdvantages', () => {
  it('equals R_i minus the mean of the other returns', () => {
    fc.assert(
      fc.property(returnsArb(2), (R) => {
        // The definition's own sums round to about G·u·max|R|: twice the centred bound covers both.
        expectWithin(
          rlooAdvantages(R),
          leaveOneOut(R),
          2 * groupTol(R.length, maxAbs(R), 0, 'none'),
        );
      }),
      RUNS,
    );
  });

  it('equals G/(G−1)·(R_i − mean), and G/(G−1) times GRPO without std', () => {
    fc.assert(
      fc.property(returnsArb(2), (R) => {
        const G = R.length;
        const a = rlooAdvantages(R);
        const { mean } = stats(R);
        const tol = 2 * groupTol(G, maxAbs(R), 0, 'none');
        expectWithin(
          a,
          R.map((x) => (G / (G - 1)) * (x - mean)),
          tol,
        );
        expectWithin(
          a,
          Array.from(grpoAdvantages(R, { normalise: 'none' }), (x) => (G / (G - 1)) * x),
          tol,
        );
      }),
      RUNS,
    );
  });

  it('the advantages sum to 0 (up to rounding)', () => {
    fc.assert(
      fc.property(returnsArb(2), (R) => {
        const G = R.length;
        const a = rlooAdvantages(R);
        let sum = 0;
        for (const x of a) sum += x;
        const tol = 2 * G * groupTol(G, maxAbs(R), 0, 'none') + G * G * U * maxAbs(a);
        expect(Math.abs(sum)).toBeLessThanOrEqual(tol);
      }),
      RUNS,
    );
  });

  it('shift invariance: R + c gives the same advantages', () => {
    fc.assert(
      fc.property(returnsArb(2), fc.double({ min: -1e4, max: 1e4, noNaN: true }), (R, c) => {
        const tol = 4 * groupTol(R.length, maxAbs(R) + Math.abs(c), 0, 'none');
        expectWithin(rlooAdvantages(R.map((x) => x + c)), rlooAdvantages(R), tol);
      }),
      RUNS,
    );
  });

  it('equal returns give exactly 0 for any group size >= 2 and value', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.integer({ min: 2, max: 64 }),
        (x, G) => {
          for (const a of rlooAdvantages(new Array(G).fill(x))) expect(a === 0).toBe(true);
        },
      ),
      RUNS,
    );
  });
});

describe('rlooAdvantages refuses bad input with a typed error naming it', () => {
  const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
    [
      'a group of one (no other episode to form the baseline)',
      () => rlooAdvantages([1]),
      RangeError,
      /`returns` has 1 entry, but .*mean return of the other episodes.*at least 2; e\.g\. rlooAdvantages\(\[1, 0, 0\.5\]\)/,
    ],
    ['an empty group', () => rlooAdvantages([]), RangeError, /`returns` has 0 entries.*at least 2/],
    [
      'returns undefined',
      () => rlooAdvantages(undefined as never),
      TypeError,
      /`returns` must be an array/,
    ],
    [
      'a NaN return',
      () => rlooAdvantages([0, Number.NaN]),
      RangeError,
      /`returns\[1\]` must be finite/,
    ],
    [
      'a -Infinity return',
      () => rlooAdvantages([Number.NEGATIVE_INFINITY, 0]),
      RangeError,
      /`returns\[0\]` must be finite/,
    ],
  ];
  for (const [name, fn, type, message] of cases) {
    it(name, () => {
      expect(fn).toThrow(type);
      expect(fn).toThrow(message);
    });
  }
});
