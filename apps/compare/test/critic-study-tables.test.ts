// The critic study's tuning rule and the tests of its parts 2 and 3, as its protocol fixes them,
// on cells and runs made up for the test.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  chooseCritic,
  creditTests,
  exactValueSpread,
  ruleTable,
  type StudyRun,
  signalOfRun,
  studyRun,
  type TuningCell,
} from '../scripts/critic-study-tables.js';

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

describe("the rule's table", () => {
  it("prints each setting's mean accuracy, RMSE against today's per task, and eligibility", () => {
    const c = cells({
      2: [
        { ...cell(0.9, 0.1), rho: 0.8, solved: 5 },
        { ...cell(0.3, 0.6), rho: null, solved: 2 },
        { ...cell(0.6, 0.05), rho: 0.7, solved: 4 },
      ],
    });
    const lines = ruleTable(c, chooseCritic(c)!.eligible);
    expect(lines).toHaveLength(2 + 16);
    // (0.9 + 0.3 + 0.6) / 3 = 0.6; 0.1 / 0.2, 0.6 / 0.3, 0.05 / 0.1.
    expect(lines[2 + 2]).toBe(
      '| 2 | 0.600 | 0.50 | 2.00 | 0.50 | no | 0.80 / – / 0.70 | 5 / 2 / 4 |',
    );
    expect(lines[2 + 0]).toContain('| 1.00 | 1.00 | 1.00 | yes |');
    const partial = cells({});
    partial[5]![0] = { seeds: 4, accuracy: 0.5, rmse: 0.2 };
    expect(ruleTable(partial, null)[2 + 5]).toBe('| 5 | – | – | – | – | – | – | – |');
  });
});

describe('the exploratory signal of a critic arm', () => {
  it('compares the spread of the error at the deciding token with the spread of A^π', () => {
    const dir = mkdtempSync(join(tmpdir(), 'critic-signal-'));
    try {
      const row = (exact: number[], deciding: number[], value = true) =>
        JSON.stringify({
          steps: { exact, decidingAdvantage: deciding, ...(value ? { value: [[0]] } : {}) },
        });
      writeFileSync(
        join(dir, 'credit.jsonl'),
        [
          // Spread 1 (A^π = ±1); error +0.5 on both: a constant offset, no error.
          row([1, -1], [1.5, -0.5]),
          // Spread 1; errors −1 and +1: sd 1, the ranking reversed.
          row([1, -1], [0, 0]),
          // One step, and a row without a critic's values: skipped.
          row([1], [2]),
          row([1, -1], [5, 5], false),
        ].join('\n'),
      );
      expect(signalOfRun(dir)).toEqual({ spread: 1, error: 0.5 });
      writeFileSync(join(dir, 'credit.jsonl'), row([1, -1], [0, 0], false));
      expect(signalOfRun(dir)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the exact values' spread (ETPO's table)", () => {
  it('pools every token prefix of an iteration, then averages the iterations', () => {
    const dir = mkdtempSync(join(tmpdir(), 'critic-spread-'));
    try {
      writeFileSync(
        join(dir, 'credit.jsonl'),
        [
          // Prefixes 1, 3 (one action) and 1, 3 (another): sd 1.
          {
            steps: {
              exactValue: [
                [1, 3],
                [1, 3],
              ],
            },
          },
          // 0, 0, 6: mean 2, sd √8.
          { steps: { exactValue: [[0], [0, 6]] } },
          // A single prefix: no spread, skipped.
          { steps: { exactValue: [[5]] } },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n'),
      );
      expect(exactValueSpread(dir)).toBeCloseTo((1 + Math.sqrt(8)) / 2, 12);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(exactValueSpread(join(tmpdir(), 'no-such-run'))).toBeNull();
  });
});

describe('the runs of parts 2 and 3', () => {
  /** A made-up finished credit run: success 0 for `slow` iterations, then 1; 128 steps each. */
  function run(dir: string, name: string, slow: number, accuracy: number[]): string {
    const runDir = join(dir, name);
    mkdirSync(runDir, { recursive: true });
    const rows = accuracy.map((a, i) => ({
      iteration: i + 1,
      envSteps: 128 * (i + 1),
      successRate: i < slow ? 0 : 1,
      episodeReturn: i < slow ? 0 : 1,
      creditAccuracyDecidingTied: a,
      criticRmse: 0.1 * (i + 1),
    }));
    writeFileSync(join(runDir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    writeFileSync(join(runDir, 'config.json'), JSON.stringify({ envSteps: 128 * accuracy.length }));
    writeFileSync(
      join(runDir, 'eval.json'),
      JSON.stringify({
        results: { 'key-token/greedy': { successRate: 0.95, meanReturn: 0.9 } },
      }),
    );
    return runDir;
  }

  it('reads the accuracy, the critic error and the steps to 90% (budget + 1 when never reached)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'critic-study-'));
    try {
      // Success from iteration 3: the 5-iteration running mean first reaches 0.9 at iteration 7
      // (iterations 3–7 all 1; at 6 it is 0.8), i.e. after 7 × 128 steps.
      const fast = studyRun(run(dir, 'fast', 2, Array(16).fill(0.5)), 'key-token');
      expect(fast.accuracy).toBeCloseTo(0.5, 12);
      expect(fast.rmse).toBeCloseTo(0.85, 12);
      expect(fast.bias).toBeNull();
      expect(fast.greedySuccess).toBe(0.95);
      const never = studyRun(run(dir, 'never', 16, [0.2, 0.4, 0.6, 0.8, 1]), 'key-token');
      expect(never.stepsTo90).toBe(5 * 128 + 1);
      expect(never.accuracy).toBeCloseTo(0.6, 12);
      expect(fast.stepsTo90).toBe(7 * 128);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tests POAD-critic against every other arm on both measures, exactly, Holm over the task', () => {
    const arm = (accuracy: number, steps: number): StudyRun[] =>
      Array.from({ length: 10 }, (_, i) => ({
        name: `s${41 + i}`,
        accuracy: accuracy + 0.01 * i,
        stepsTo90: steps + 10 * i,
        rmse: null,
        bias: null,
        rho: null,
        greedySuccess: 1,
        greedyReturn: 1,
      }));
    const tests = creditTests([
      arm(0.9, 1000),
      arm(0.9, 1000),
      arm(0.5, 1000),
      arm(0.9, 3000),
      arm(0.1, 4097),
      arm(0.9, 1000),
    ]);
    expect(tests).toHaveLength(10);
    const poad = tests.find((t) => t.other === 'POAD as today' && t.measure === 'accuracy')!;
    expect(poad.difference!.diff).toBeCloseTo(0.4, 12);
    expect(poad.difference!.exact).toBe(true);
    // Completely separated groups of 10: 2 of 184,756 splits are as extreme.
    expect(poad.difference!.p).toBeCloseTo(2 / 184_756, 12);
    const grpo = tests.find((t) => t.other === 'GRPO' && t.measure === 'stepsTo90')!;
    expect(grpo.difference!.diff).toBeCloseTo(-2000, 9);
    const same = tests.find((t) => t.other === 'POAD-oracle' && t.measure === 'accuracy')!;
    expect(same.difference!.p).toBe(1);
    // Holm over the 10: the smallest p times 10.
    expect(Math.min(...tests.map((t) => t.holm!))).toBeCloseTo((2 / 184_756) * 10, 12);
  });
});
