import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionGae } from '../src/actionGae.js';
import { RUNS, segmentArb, unit } from './arbitraries.js';

describe('actionGae', () => {
  it('constant values and a final reward give the closed form of SB3-style GAE tests', () => {
    // V ≡ c, reward 1 at the last of T steps, episode ends: δ_t = γc − c for t < T-1, δ_{T-1} = 1 − c.
    for (const gamma of [1, 0.99]) {
      for (const lambda of [1, 0.9]) {
        const T = 5;
        const c = 0.3;
        const { advantages } = actionGae(
          {
            rewards: [0, 0, 0, 0, 1],
            dones: [0, 0, 0, 0, 1],
            values: new Array(T).fill(c),
            bootstrapValue: 123,
          },
          { gamma, lambda },
        );
        for (let t = 0; t < T; t++) {
          let expected = 0;
          for (let j = t; j < T; j++) {
            const delta = j === T - 1 ? 1 - c : gamma * c - c;
            expected += (gamma * lambda) ** (j - t) * delta;
          }
          expect(advantages[t]!).toBeCloseTo(expected, 12);
        }
      }
    }
  });

  it('λ = 1 gives the discounted Monte-Carlo return as the target', () => {
    fc.assert(
      fc.property(segmentArb({ maxTokens: 1 }), unit, (seg, gamma) => {
        const { returns } = actionGae(seg, { gamma, lambda: 1 });
        let G = seg.bootstrapValue;
        for (let t = seg.rewards.length - 1; t >= 0; t--) {
          G = seg.rewards[t]! + (seg.dones[t] ? 0 : gamma * G);
          expect(Math.abs(returns[t]! - G)).toBeLessThan(1e-9 * Math.max(1, Math.abs(G)));
        }
      }),
      RUNS,
    );
  });
});
