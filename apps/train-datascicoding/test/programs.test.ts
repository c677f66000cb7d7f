import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plantHealthCsv } from '../src/plant-health.js';
import {
  attemptsOf,
  codeEvolutionHtml,
  improvements,
  lineDiff,
  type ProgramRow,
  programStats,
  readPrograms,
  recordPrograms,
} from '../src/programs.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const row = (iteration: number, envStep: number, reward: number, body: string): ProgramRow => ({
  iteration,
  envStep,
  reward,
  ran: reward > -1,
  body,
});

describe('lineDiff', () => {
  it('keeps common lines and marks removed and added ones', () => {
    const a = 'from a import X\n    model = X()\n    model.fit(x, y)';
    const b = 'from a import X\nfrom b import S\n    model = make(S(), X())\n    model.fit(x, y)';
    expect(lineDiff(a, b)).toEqual([
      { op: ' ', text: 'from a import X' },
      { op: '-', text: '    model = X()' },
      { op: '+', text: 'from b import S' },
      { op: '+', text: '    model = make(S(), X())' },
      { op: ' ', text: '    model.fit(x, y)' },
    ]);
    expect(lineDiff(a, a).every((d) => d.op === ' ')).toBe(true);
    // Applying the diff to a gives b.
    const d = lineDiff(b, a);
    expect(
      d
        .filter((l) => l.op !== '-')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(a);
    expect(
      d
        .filter((l) => l.op !== '+')
        .map((l) => l.text)
        .join('\n'),
    ).toBe(b);
  });
});

describe('attemptsOf', () => {
  // Two environments, at most 3 attempts. Env 0 (odd steps) fails three times (truncated), then
  // runs, fails, runs; env 1 (even steps) runs, then runs at its second attempt, then fails three times.
  const ran = [false, true, false, false, false, true, true, false, false, false, true, false];
  const rows = ran.map((r, i) => ({ envStep: i + 1, ran: r }));

  it('numbers each program within its episode, per environment', () => {
    expect(attemptsOf(rows, 2, 3)).toEqual([1, 1, 2, 1, 3, 2, 1, 1, 1, 2, 2, 3]);
    // One environment: after the third failure the episode was truncated, so the fourth program
    // is a first attempt again.
    const one = [false, false, false, false, true, false].map((r, i) => ({
      envStep: i + 1,
      ran: r,
    }));
    expect(attemptsOf(one, 1, 3)).toEqual([1, 2, 3, 1, 2, 1]);
  });

  it('keeps the order of the rows it is given, and refuses a bad environment count', () => {
    const shuffled = [rows[5]!, rows[0]!, rows[11]!, ...rows.slice(1, 5), ...rows.slice(6, 11)];
    const byStep = new Map(rows.map((r, i) => [r.envStep, attemptsOf(rows, 2, 3)[i]]));
    expect(attemptsOf(shuffled, 2, 3)).toEqual(shuffled.map((r) => byStep.get(r.envStep)));
    expect(() => attemptsOf(rows, 0)).toThrow(/numEnvs must be a positive integer/);
  });
});

describe('program records', () => {
  const rows = [
    row(1, 1, -1, 'bad'),
    row(1, 2, 0.9, 'ok'),
    row(2, 3, 0.8, 'worse'),
    row(2, 4, -1, 'bad again'),
    row(3, 5, 0.95, 'better'),
    row(3, 6, 0.95, 'tie'),
  ];

  it('per iteration: mean reward, share that ran, best so far', () => {
    const stats = programStats(rows);
    expect(stats.map(({ meanReward, ...rest }) => rest)).toEqual([
      { iteration: 1, envSteps: 2, programsRun: 0.5, bestReward: 0.9 },
      { iteration: 2, envSteps: 4, programsRun: 0.5, bestReward: 0.9 },
      { iteration: 3, envSteps: 6, programsRun: 1, bestReward: 0.95 },
    ]);
    const means = [-0.05, -0.1, 0.95];
    for (const [i, s] of stats.entries()) expect(s.meanReward).toBeCloseTo(means[i]!, 12);
  });

  it('the evolution keeps each program that raised the best reward (ties do not)', () => {
    expect(improvements(rows).map((r) => r.body)).toEqual(['bad', 'ok', 'better']);
    const html = codeEvolutionHtml('run <1>', rows);
    expect(html).toContain('run &lt;1&gt;');
    expect(html.match(/<section>/g)).toHaveLength(3);
    expect(html).toContain('<div class="l add"><span class="op">+</span>better</div>');
    expect(html).toContain('<div class="l del"><span class="op">-</span>ok</div>');
  });

  it('rewrites an iteration that a killed run recorded before its checkpoint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poad-programs-'));
    dirs.push(dir);
    recordPrograms(dir, 't', 1, [{ reward: 0.5, body: 'a', envStep: 1 }]);
    recordPrograms(dir, 't', 2, [{ reward: 0.7, body: 'b', envStep: 2 }]);
    // Resumed after the checkpoint of iteration 1: iteration 2 runs again, differently.
    const s = recordPrograms(dir, 't', 2, [{ reward: -1, body: 'c', envStep: 2 }]);
    expect(readPrograms(dir).map((r) => r.body)).toEqual(['a', 'c']);
    expect(s).toEqual({
      iteration: 2,
      envSteps: 2,
      meanReward: -1,
      programsRun: 0,
      bestReward: 0.5,
    });
    expect(JSON.parse(readFileSync(join(dir, 'best.json'), 'utf8')).body).toBe('a');
    const svg = readFileSync(join(dir, 'code-curves.svg'), 'utf8');
    expect(svg).toContain('share of programs that ran');
  });
});

describe('plant_health.csv', () => {
  it('is what the generator writes, with three classes and ten feature columns', () => {
    const file = new URL('../data/plant_health.csv', import.meta.url);
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(plantHealthCsv());
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(601);
    expect(lines[0]!.split(',')).toHaveLength(11);
    const classes = new Set(lines.slice(1).map((l) => l.split(',').at(-1)));
    expect([...classes].sort()).toEqual(['diseased', 'healthy', 'stressed']);
  });
});
