// The streak every trainer family's update counts non-finite minibatches with.
import { describe, expect, it } from 'vitest';
import { NonFiniteStreak, NonFiniteUpdateError } from '../src/index.js';

describe('NonFiniteStreak', () => {
  it('grows with each skip, ends at a finite minibatch, and throws at the limit', () => {
    const s = new NonFiniteStreak(0, 3);
    s.skipped(() => 'a');
    s.skipped(() => 'b');
    expect([s.length, s.skips]).toEqual([2, 2]);
    s.finite();
    expect([s.length, s.skips]).toEqual([0, 2]);
    s.skipped(() => 'c');
    s.skipped(() => 'd');
    let thrown: unknown;
    try {
      s.skipped(() => 'epoch 2, minibatch 1: loss NaN');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(NonFiniteUpdateError);
    const err = thrown as NonFiniteUpdateError;
    expect([err.streak, err.detail, err.iteration]).toEqual([
      3,
      'epoch 2, minibatch 1: loss NaN',
      null,
    ]);
    expect(s.skips).toBe(5);
  });

  it("counts on from the previous update's streak, and builds the detail only when it throws", () => {
    const s = new NonFiniteStreak(4, 6);
    let built = 0;
    const detail = () => {
      built += 1;
      return 'x';
    };
    s.skipped(detail);
    expect([s.length, s.skips, built]).toEqual([5, 1, 0]);
    expect(() => s.skipped(detail)).toThrow(/^6 consecutive minibatches .*\(last: x\)/);
    expect(built).toBe(1);
  });
});
