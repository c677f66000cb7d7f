import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvArgumentError } from '../src/errors.js';
import { discountedReturn, ReturnTracker } from '../src/returns.js';

const rewards = fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { maxLength: 60 });
const gamma = fc.double({ min: 0, max: 1, noNaN: true });

describe('discountedReturn', () => {
  it('matches hand-computed values', () => {
    expect(discountedReturn([0, 0, 0, 0, 0, 1], 0.95)).toBeCloseTo(0.7737809375, 12);
    expect(discountedReturn([1, 2, 3], 0.5)).toBeCloseTo(1 + 1 + 0.75, 12);
    expect(discountedReturn([], 0.9)).toBe(0);
  });

  it('equals the plain sum for gamma = 1 and the first reward for gamma = 0', () => {
    fc.assert(
      fc.property(rewards, (rs) => {
        expect(discountedReturn(rs, 1)).toBeCloseTo(
          rs.reduce((s, r) => s + r, 0),
          9,
        );
        // == so that -0 and +0 compare equal
        expect(discountedReturn(rs, 0) === (rs[0] ?? 0)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('satisfies G = r_1 + gamma * G(rest)', () => {
    fc.assert(
      fc.property(
        rewards.filter((r) => r.length > 0),
        gamma,
        (rs, g) => {
          const [first, ...rest] = rs;
          expect(discountedReturn(rs, g)).toBeCloseTo(
            (first as number) + g * discountedReturn(rest, g),
            9,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects a discount outside [0, 1]', () => {
    expect(() => discountedReturn([1], 1.5)).toThrow(EnvArgumentError);
    expect(() => discountedReturn([1], Number.NaN)).toThrow(EnvArgumentError);
    expect(() => new ReturnTracker(-0.1)).toThrow(EnvArgumentError);
  });
});

describe('ReturnTracker', () => {
  it('accumulates the same value as discountedReturn and counts steps', () => {
    fc.assert(
      fc.property(rewards, gamma, (rs, g) => {
        const tracker = new ReturnTracker(g);
        for (const r of rs) tracker.add(r);
        expect(tracker.value).toBeCloseTo(discountedReturn(rs, g), 9);
        expect(tracker.length).toBe(rs.length);
        tracker.reset();
        expect(tracker.value).toBe(0);
        expect(tracker.length).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
