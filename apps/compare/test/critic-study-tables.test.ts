// The critic study's tuning rule, as its protocol fixes it, on cells made up for the test.
import { describe, expect, it } from 'vitest';
import { chooseCritic, type TuningCell } from '../scripts/critic-study-tables.js';

const cell = (accuracy: number, rmse: number): TuningCell => ({ seeds: 5, accuracy, rmse });
/** 16 settings × 3 tasks, every one like setting 0 unless changed. */
function cells(changes: Record<number, TuningCell[]>): TuningCell[][] {
  return Array.from(
    { length: 16 },
    (_, i) => changes[i] ?? [cell(0.5, 0.2), cell(0.1, 0.3), cell(0.3, 0.1)],
  );
}

describe('the tuning rule', () => {
  it('takes the eligible setting with the best mean accuracy at the deciding token', () => {
    const r = chooseCritic(
      cells({
        // Best accuracy but a worse critic on delayed: not eligible.
        3: [cell(0.9, 0.1), cell(0.9, 0.31), cell(0.9, 0.05)],
        7: [cell(0.7, 0.1), cell(0.6, 0.2), cell(0.6, 0.05)],
      }),
    );
    expect(r?.eligible).not.toContain(3);
    expect(r?.chosen).toBe(7);
  });

  it("decides settings within 0.01 by the smaller RMSE against today's, then the lower number", () => {
    const r = chooseCritic(
      cells({
        4: [cell(0.7, 0.15), cell(0.6, 0.25), cell(0.6, 0.09)],
        9: [cell(0.705, 0.1), cell(0.6, 0.1), cell(0.6, 0.05)],
      }),
    );
    expect(r?.chosen).toBe(9);
    const tie = chooseCritic(
      cells({
        5: [cell(0.7, 0.1), cell(0.6, 0.2), cell(0.6, 0.05)],
        6: [cell(0.7, 0.1), cell(0.6, 0.2), cell(0.6, 0.05)],
      }),
    );
    expect(tie?.chosen).toBe(5);
  });

  it("waits for every cell, and falls back to today's critic when no other is eligible", () => {
    const partial = cells({});
    partial[2]![1] = { seeds: 3, accuracy: 0.9, rmse: 0.1 };
    expect(chooseCritic(partial)).toBeNull();
    const worse = cells(
      Object.fromEntries(
        Array.from({ length: 15 }, (_, k) => [
          k + 1,
          [cell(0.9, 0.5), cell(0.9, 0.5), cell(0.9, 0.5)],
        ]),
      ),
    );
    expect(chooseCritic(worse)).toEqual({ chosen: 0, eligible: [0] });
  });
});
