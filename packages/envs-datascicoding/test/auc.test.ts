import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AucError, binaryRocAuc, meanAndStd, splitRocAuc } from '../src/index.js';

/** Probability that a random positive outscores a random negative, ties counting one half. */
function pairwiseAuc(positive: boolean[], scores: number[]): number {
  let wins = 0;
  let pairs = 0;
  for (let i = 0; i < scores.length; i++) {
    if (!positive[i]) continue;
    for (let j = 0; j < scores.length; j++) {
      if (positive[j]) continue;
      pairs++;
      const a = scores[i] as number;
      const b = scores[j] as number;
      wins += a > b ? 1 : a === b ? 0.5 : 0;
    }
  }
  return wins / pairs;
}

const labelledScores = fc
  .array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 8 })), { minLength: 2, maxLength: 40 })
  .filter((rows) => rows.some(([p]) => p) && rows.some(([p]) => !p));

describe('binaryRocAuc', () => {
  it('equals the pairwise win rate with ties as one half', () => {
    fc.assert(
      fc.property(labelledScores, (rows) => {
        const positive = rows.map(([p]) => p);
        const scores = rows.map(([, s]) => s / 8);
        expect(binaryRocAuc(positive, scores)).toBeCloseTo(pairwiseAuc(positive, scores), 12);
      }),
      { numRuns: 300 },
    );
  });

  it('is 1 - AUC when the labels are swapped, and unchanged by a monotone transform', () => {
    fc.assert(
      fc.property(labelledScores, (rows) => {
        const positive = rows.map(([p]) => p);
        const scores = rows.map(([, s]) => s);
        const auc = binaryRocAuc(positive, scores);
        expect(
          binaryRocAuc(
            positive.map((p) => !p),
            scores,
          ),
        ).toBeCloseTo(1 - auc, 12);
        expect(
          binaryRocAuc(
            positive,
            scores.map((s) => Math.exp(s) * 3 + 1),
          ),
        ).toBeCloseTo(auc, 12);
      }),
      { numRuns: 200 },
    );
  });

  it('matches hand-computed values', () => {
    expect(binaryRocAuc([false, false, true, true], [0.1, 0.4, 0.35, 0.8])).toBe(0.75);
    expect(binaryRocAuc([true, false], [0.5, 0.5])).toBe(0.5);
    expect(binaryRocAuc([true, true, false], [0.9, 0.8, 0.1])).toBe(1);
  });

  it('refuses a single class', () => {
    expect(() => binaryRocAuc([true, true], [0.1, 0.2])).toThrow(AucError);
  });
});

describe('splitRocAuc', () => {
  it('uses column 1 for two columns with the larger label positive', () => {
    const labels = [0, 0, 1, 1];
    const proba = [0.9, 0.1, 0.6, 0.4, 0.65, 0.35, 0.2, 0.8];
    expect(splitRocAuc(labels, proba, 2)).toBe(0.75);
  });

  it('averages the one-vs-one pairs for more than two classes', () => {
    // Class 2 is perfectly separated; classes 0 and 1 are swapped for one row each.
    const labels = [0, 0, 1, 1, 2, 2];
    const proba = [
      [0.7, 0.3, 0],
      [0.3, 0.7, 0],
      [0.6, 0.4, 0],
      [0.2, 0.8, 0],
      [0, 0, 1],
      [0.1, 0, 0.9],
    ].flat();
    // pair (0,1): AUC of column 0 on rows of class 0/1 = 0.75, of column 1 = 0.75.
    // pairs (0,2) and (1,2): 1 each.
    expect(splitRocAuc(labels, proba, 3)).toBeCloseTo((0.75 + 1 + 1) / 3, 14);
  });

  it('refuses rows that do not sum to 1, NaN, and column/class mismatches', () => {
    expect(() => splitRocAuc([0, 1, 2], [0.5, 0.5, 0.5, 0.2, 0.2, 0.6, 0, 0, 1], 3)).toThrow(
      /sum to 1/,
    );
    expect(() => splitRocAuc([0, 1], [Number.NaN, 1, 0, 1], 2)).toThrow(/NaN/);
    expect(() => splitRocAuc([0, 1], [1, 0, 0, 1, 0, 0], 3)).toThrow(/2 classes but/);
    expect(() => splitRocAuc([0, 0], [1, 0, 1, 0], 2)).toThrow(/one class/);
    expect(() => splitRocAuc([0, 1], [1, 0], 1)).toThrow(/single column/);
  });
});

describe('meanAndStd', () => {
  it('uses the population standard deviation', () => {
    const { mean, std } = meanAndStd([1, 2, 3, 4]);
    expect(mean).toBe(2.5);
    expect(std).toBeCloseTo(Math.sqrt(1.25), 15);
  });
});
