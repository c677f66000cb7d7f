import { describe, expect, it } from 'vitest';
import { type GroupEpisode, groupAdvantages } from '../src/index.js';

/** Two groups of two episodes; samples numbered episode after episode. */
const episodes: GroupEpisode[] = [
  { group: 0, samples: [0, 1], rewards: [0, 1], states: ['a', 'b'], finished: true },
  { group: 0, samples: [2], rewards: [0], states: ['a'], finished: true },
  { group: 1, samples: [3], rewards: [1], states: ['c'], finished: true },
  { group: 1, samples: [4], rewards: [1], states: ['c'], finished: true },
];
const base = { groups: 2, normalise: 'none' as const, gamma: 1, omega: 1 };

describe('groupAdvantages', () => {
  it("GRPO gives every step its episode's return minus the group's mean; a group without spread gives 0", () => {
    // Group 0: returns 1 and 0, mean 0.5 → +0.5, −0.5. Group 1: returns 1 and 1 → 0 and 0.
    const r = groupAdvantages(episodes, 5, { ...base, estimator: 'grpo' });
    expect(Array.from(r.perSample)).toEqual([0.5, 0.5, -0.5, 0, 0]);
    expect(Array.from(r.spread)).toEqual([1, 0]);
    expect(r.zeroSpreadShare).toBe(0.5);
    // std normalisation: population std 0.5 → ±1 (up to ε = 1e-6).
    const s = groupAdvantages(episodes, 5, { ...base, normalise: 'std', estimator: 'grpo' });
    expect(s.perSample[0]).toBeCloseTo(1, 5);
    expect(s.perSample[2]).toBeCloseTo(-1, 5);
  });

  it('RLOO subtracts the mean of the other episodes', () => {
    // Group 0: 1 − 0 = 1 and 0 − 1 = −1.
    const r = groupAdvantages(episodes, 5, { ...base, estimator: 'rloo' });
    expect(Array.from(r.perSample)).toEqual([1, 1, -1, 0, 0]);
  });

  it('GiGPO adds ω times the step advantage over steps from equal states', () => {
    // Group 0, anchor state 'a': step returns (γ = 1) 1 (episode 0, step 0) and 0 → ±0.5;
    // state 'b' stands alone → 0. Combined = episode (±0.5) + ω·step.
    const r = groupAdvantages(episodes, 5, { ...base, estimator: 'gigpo' });
    expect(Array.from(r.perSample)).toEqual([1, 0.5, -1, 0, 0]);
    const w0 = groupAdvantages(episodes, 5, { ...base, omega: 0, estimator: 'gigpo' });
    expect(Array.from(w0.perSample)).toEqual([0.5, 0.5, -0.5, 0, 0]);
  });
});
