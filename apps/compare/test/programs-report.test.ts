import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupCurve, programSummary, programsMarkdown } from '../src/report.js';

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
