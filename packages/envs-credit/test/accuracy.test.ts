import { describe, expect, it } from 'vitest';
import {
  CreditArgumentError,
  creditAccuracy,
  policyAdvantages,
  spearman,
  uniformPolicy,
} from '../src/index.js';

describe('creditAccuracy', () => {
  // Loop task under the uniform policy (hand values in exact-values.test.ts):
  // A(hallway, kitchen) > 0 > A(hallway, bathroom); A(kitchen, take) > 0 > A(kitchen, look).
  const exact = policyAdvantages('loop', uniformPolicy).advantage;

  it('is 1 when the advantages order the steps as A^π does, −1 when reversed', () => {
    const steps = [
      ['hallway', 'walk to the bathroom'],
      ['kitchen', 'look in the fridge'],
      ['kitchen', 'take the milk from the fridge'],
      ['hallway', 'walk to the kitchen'],
    ] as const;
    const truth = steps.map(([s, l]) => exact[s]![l]!);
    // Any increasing map of the truth ranks the same.
    const same = creditAccuracy(
      'loop',
      uniformPolicy,
      steps.map(([state, label], i) => ({ state, label, advantage: 10 * truth[i]! ** 3 + 1 })),
    );
    expect(same.spearman).toBeCloseTo(1, 12);
    expect(same.steps).toBe(4);
    expect(Array.from(same.exact)).toEqual(truth.map((x) => expect.closeTo(x, 11)));
    const reversed = creditAccuracy(
      'loop',
      uniformPolicy,
      steps.map(([state, label], i) => ({ state, label, advantage: -truth[i]! })),
    );
    expect(reversed.spearman).toBeCloseTo(-1, 12);
  });

  it('equals Spearman of the given advantages against A^π, on a hand example', () => {
    const steps = [
      { state: 'hallway', label: 'walk to the kitchen', advantage: 0.41 },
      { state: 'hallway', label: 'walk to the bathroom', advantage: -0.52 },
      { state: 'kitchen', label: 'look in the fridge', advantage: 0.3 },
      { state: 'kitchen', label: 'take the milk from the fridge', advantage: 0.2 },
    ];
    // A^π in the order given: kitchen +0.452, bathroom −0.452, look −0.048, take +0.048, ranks
    // 4, 1, 2, 3; the learner's ranks are 4, 1, 3, 2 (look and take swapped):
    // Σd² = 0 + 0 + 1 + 1 = 2, ρ = 1 − 6·2/(4·15) = 0.8.
    const r = creditAccuracy('loop', uniformPolicy, steps);
    expect(r.spearman).toBeCloseTo(
      spearman(
        steps.map((s) => s.advantage),
        steps.map((s) => exact[s.state]![s.label]!),
      ),
      12,
    );
    expect(r.spearman).toBeCloseTo(0.8, 12);
  });

  it('ranks labels of equal exact value as tied, whatever their rounding', () => {
    // The delayed task's two filler labels have identical effects: A^π is 0 for both.
    const pi = (_s: string, labels: readonly string[]) =>
      labels.map((_, i) => (i === 0 ? 0.7 : 0.3 / (labels.length - 1)));
    const steps = [
      { state: 'bread-1', label: 'walk down the hallway', advantage: 0.1 },
      { state: 'bread-1', label: 'walk on', advantage: 0.2 },
      { state: 'kitchen', label: 'grab the bread', advantage: 0.3 },
      { state: 'kitchen', label: 'grab the chips', advantage: -0.3 },
    ];
    const r = creditAccuracy('delayed', pi, steps);
    expect(r.exact[0]).toBe(r.exact[1]);
    // Exact ranks: chips 1, the fillers 2.5 and 2.5, bread 4 (bread's A > 0 > chips' A).
    expect(r.spearman).toBeCloseTo(spearman([0.1, 0.2, 0.3, -0.3], [2.5, 2.5, 4, 1]), 12);
  });

  it("with a tie grid, ranks the learner's advantages that float32 left apart as ties", () => {
    const pi = (_s: string, labels: readonly string[]) =>
      labels.map((_, i) => (i === 0 ? 0.7 : 0.3 / (labels.length - 1)));
    // An exact critic's advantages: the fillers' A^π is 0, left at ±1e-8 by float32 sums.
    const steps = [
      { state: 'bread-1', label: 'walk down the hallway', advantage: 1.2e-8 },
      { state: 'bread-1', label: 'walk on', advantage: -0.9e-8 },
      { state: 'bread-1', label: 'walk down the hallway', advantage: -1.1e-8 },
      { state: 'kitchen', label: 'grab the bread', advantage: 0.3 },
      { state: 'kitchen', label: 'grab the chips', advantage: -0.3 },
    ];
    expect(creditAccuracy('delayed', pi, steps).spearman).toBeLessThan(1);
    expect(creditAccuracy('delayed', pi, steps, { tieGrid: 1e-6 }).spearman).toBeCloseTo(1, 12);
    expect(() => creditAccuracy('delayed', pi, steps, { tieGrid: -1 })).toThrow(/options.tieGrid/);
  });

  it('is NaN with fewer than two steps or when every step has the same exact credit', () => {
    expect(
      creditAccuracy('loop', uniformPolicy, [
        { state: 'hallway', label: 'walk to the kitchen', advantage: 1 },
      ]).spearman,
    ).toBeNaN();
    expect(
      creditAccuracy('loop', uniformPolicy, [
        { state: 'kitchen', label: 'look in the fridge', advantage: 1 },
        { state: 'kitchen', label: 'look in the fridge', advantage: 2 },
      ]).spearman,
    ).toBeNaN();
  });

  it('names the bad input', () => {
    expect(() =>
      creditAccuracy('loop', uniformPolicy, [
        { state: 'attic', label: 'walk to the kitchen', advantage: 1 },
      ]),
    ).toThrow(/no state "attic"/);
    expect(() =>
      creditAccuracy('loop', uniformPolicy, [
        { state: 'hallway', label: 'walk to the kitchen', advantage: Number.NaN },
      ]),
    ).toThrow(CreditArgumentError);
    expect(() =>
      creditAccuracy('loop', uniformPolicy, [
        { state: 'hallway', label: 'walk to the kitchen', advantage: Number.NaN },
      ]),
    ).toThrow(/steps\[0\]\.advantage/);
  });
});
