import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { afterAll, describe, expect, it } from 'vitest';
import { priorDatasetOf, readPrior } from '../src/prior.js';
import { fixed, groupCurve, programSummary, programsMarkdown } from '../src/report.js';

const root = mkdtempSync(join(tmpdir(), 'poad-programs-report-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run folder whose metrics.jsonl holds these rows. */
function run(name: string, rows: Record<string, unknown>[]): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'metrics.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return dir;
}

/** Six iterations of 32 programs with these mean rewards; 'ran' and 'best' follow from them. */
const rows = (means: number[]) => {
  let best = -1;
  return means.map((m, i) => {
    best = Math.max(best, m + 0.1);
    return {
      iteration: i + 1,
      envSteps: 32 * (i + 1),
      episodeReturn: m,
      successRate: null,
      meanReward: m,
      programsRun: (m + 1) / 2,
      bestReward: best,
    };
  });
};

describe('program figures of a DataSciCoding comparison', () => {
  const a = run('a-s1', rows([0, 0, 0, 0, 0, 1]));
  const b = run('a-s2', rows([0.2, 0.2, 0.2, 0.2, 0.2, 0.4]));

  it('first and last 5 iterations, best reward, mean ± std over seeds', () => {
    const s = programSummary({ label: 'poad', runDirs: [a, b] })!;
    expect(s.startReward[0]).toBeCloseTo(0.1, 12); // (0 + 0.2) / 2
    expect(s.startReward[1]).toBeCloseTo(0.1, 12);
    expect(s.finalReward[0]).toBeCloseTo((0.2 + 0.24) / 2, 12); // last 5: mean 0.2 and 0.24
    expect(s.finalRun[0]).toBeCloseTo((0.6 + 0.62) / 2, 12);
    expect(s.best).toEqual([expect.closeTo(0.8, 12), expect.closeTo(0.3, 12)]);
    const table = programsMarkdown([s]).join('\n');
    expect(table).toContain(
      '| poad | 0.100 ± 0.100 | 0.220 ± 0.020 | 55% ± 5% | 61% ± 1% | 0.800 ± 0.300 |',
    );
  });

  it('negative means are written with the minus sign, as the differences are', () => {
    const c = run('b-s1', rows([-0.5, -0.5, -0.5, -0.5, -0.5, -0.5]));
    const s = programSummary({ label: 'ntpo', runDirs: [c] })!;
    expect(programsMarkdown([s]).join('\n')).toContain(
      '| ntpo | −0.500 ± 0.000 | −0.500 ± 0.000 | 25% ± 0% | 25% ± 0% | −0.400 ± 0.000 |',
    );
  });

  it('the best-reward curve is not smoothed, the mean-reward curve is', () => {
    const best = groupCurve({ label: 'poad', runDirs: [a] }, 'bestReward');
    expect(best.points.map(([, y]) => y)).toEqual([0.1, 0.1, 0.1, 0.1, 0.1, 1.1]);
    const mean = groupCurve({ label: 'poad', runDirs: [a] }, 'meanReward');
    expect(mean.points.at(-1)![1]).toBeCloseTo(0.2, 12); // mean of the last 5 iterations
  });

  it('runs without program columns (other environments) have none', () => {
    const other = run('vh-s1', [
      { iteration: 1, envSteps: 128, episodeReturn: 0.1, successRate: 0 },
    ]);
    // VirtualHome and Overcooked runs log a mean step reward too, but no program columns.
    const rewarded = run('vh-s2', [
      { iteration: 1, envSteps: 128, episodeReturn: 0.1, successRate: 0, meanReward: 0.02 },
    ]);
    expect(programSummary({ label: 'poad', runDirs: [rewarded] })).toBeNull();
    expect(programSummary({ label: 'poad', runDirs: [other] })).toBeNull();
    expect(programsMarkdown([])).toEqual([]);
  });
});

describe('numbers in the report', () => {
  it('a negative number takes U+2212, one that rounds to zero takes no sign', () => {
    expect(fixed(-0.5, 3)).toBe('−0.500');
    expect(fixed(0.5, 3)).toBe('0.500');
    expect(fixed(-0.0004, 3)).toBe('0.000');
    expect(fixed(-0.4, 0)).toBe('0');
    expect(fixed(-12.5, 1)).toBe('−12.5');
    expect(fixed(-Infinity, 1)).toBe('−Infinity');
  });
});

describe('the prior beside a DataSciCoding comparison', () => {
  /** A prior file of `npm run prior` with these programs on wine (reward = AUC, or −1). */
  const priorFile = (programs: { ok: boolean; auc: number | null }[]) => {
    const f = join(root, `prior-${programs.length}.json`);
    const rewards = programs.map((p) => (p.ok ? (p.auc as number) : -1));
    const aucs = programs.filter((p) => p.ok).map((p) => p.auc as number);
    writeFileSync(
      f,
      JSON.stringify({
        options: { samples: programs.length },
        summaries: [
          {
            dataset: 'wine',
            samples: programs.length,
            ran: aucs.length / programs.length,
            meanReward: rewards.reduce((a, b) => a + b, 0) / programs.length,
            bestAuc: Math.max(...aucs),
          },
        ],
        programs: { wine: programs.map((p) => ({ body: 'x', tokens: 1, reason: null, ...p })) },
      }),
    );
    return f;
  };
  // Rewards 0.9, 0.9, 0.9, −1: mean 0.425, sample std 0.95, standard error 0.475.
  const file = priorFile([
    { ok: true, auc: 0.9 },
    { ok: true, auc: 0.9 },
    { ok: true, auc: 0.9 },
    { ok: false, auc: null },
  ]);

  it('reads the dataset of the comparison, with the standard error of its mean reward', () => {
    const p = readPrior(file, 'wine');
    expect(p).toMatchObject({ dataset: 'wine', samples: 4, ran: 0.75, bestAuc: 0.9 });
    expect(p.meanReward).toBeCloseTo(0.425, 12);
    expect(p.meanRewardSe).toBeCloseTo(0.475, 12);
  });

  it('refuses a missing file, another JSON, and a dataset the file lacks, saying how to make one', () => {
    expect(() => readPrior(join(root, 'nope.json'), 'wine')).toThrow(
      /no such file; make one with: npm run prior/,
    );
    const other = join(root, 'other.json');
    writeFileSync(other, '{"runs": []}');
    expect(() => readPrior(other, 'wine')).toThrow(OptionError);
    expect(() => readPrior(other, 'wine')).toThrow(/not a prior file/);
    expect(() => readPrior(file, 'digits')).toThrow(/no programs of digits in it \(it has: wine\)/);
  });

  it("names a csv comparison's dataset by its file, and refuses one without --csv", () => {
    expect(priorDatasetOf('wine', undefined)).toBe('wine');
    expect(priorDatasetOf('csv', '--csv apps/x/data/plant_health.csv --target health')).toBe(
      'plant_health.csv',
    );
    expect(priorDatasetOf('csv', '--target health --csv=d/p.csv')).toBe('p.csv');
    expect(() => priorDatasetOf('csv', '--target health')).toThrow(/names no --csv FILE/);
  });

  it('adds a prior row and each seed against it, all programs and first attempts alone', () => {
    // Two environments, two iterations of four programs. Env 0 (odd steps) fails and then runs
    // at its second attempt, twice; env 1 (even steps) runs at every first attempt.
    const dir = run('wine-s1', rows([0.2, 0.6]));
    const programs = [
      [1, 1, -1, false],
      [1, 2, 0.8, true],
      [1, 3, 0.6, true],
      [1, 4, 0.8, true],
      [2, 5, -1, false],
      [2, 6, 1, true],
      [2, 7, 1, true],
      [2, 8, 1, true],
    ].map(([iteration, envStep, reward, ran]) => ({ iteration, envStep, reward, ran, body: 'x' }));
    writeFileSync(
      join(dir, 'programs.jsonl'),
      programs.map((p) => `${JSON.stringify(p)}\n`).join(''),
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ envs: 2 }));
    const s = programSummary({ label: 'poad', runDirs: [dir] }, 1)!;
    // First attempts: steps 1, 2, 4 (step 3 is env 0's fix-it turn), then 5, 6, 8.
    expect(s.perSeed[0]!.firstAttempts!.startReward).toBeCloseTo((-1 + 0.8 + 0.8) / 3, 12);
    expect(s.perSeed[0]!.firstAttempts!.finalReward).toBeCloseTo((-1 + 1 + 1) / 3, 12);
    const table = programsMarkdown([s], readPrior(file, 'wine')).join('\n');
    expect(table).toContain('| prior (4 programs) | 0.425 ± 0.475 (s.e.) | | 75% | | 0.900 |');
    // Last iteration (k = 1): mean reward 0.6 − 0.425; ran (0.6 + 1) / 2 = 80% − 75%; first
    // attempts 0.200 → 0.333, 0.333 − 0.425.
    expect(table).toContain(
      '| poad | +0.175 ± 0.000 | +5.0 ± 0.0 | 1/1 | 0.200 → 0.333 | −0.092 ± 0.000 |',
    );
    expect(programsMarkdown([s]).join('\n')).not.toContain('prior');
  });
});
