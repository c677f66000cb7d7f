// The best checkpoint's evaluation beside the final one, and the collapses per setting, in a
// comparison's report; absent (so that archived reports stay as they were) when no run kept a
// best apart from its latest or had its monitor fire.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { markdown, summarise } from '../src/report.js';

const base = mkdtempSync(join(tmpdir(), 'poad-best-collapses-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const greedy = (successRate: number, meanReturn: number) => ({
  'food-preparation/greedy': { successRate, meanReturn },
});

/** A finished run: 4 iterations, the monitor firing at `fired`, a best kept apart or not. */
function run(
  name: string,
  o: { fired?: number[]; rollbacks?: number; best?: { iteration: number; success: number } },
) {
  const dir = join(base, name);
  mkdirSync(dir);
  const rows = [1, 2, 3, 4].map((i) => ({
    iteration: i,
    envSteps: 128 * i,
    episodes: 8,
    episodeReturn: 0.3,
    successRate: 0.5,
    ...(o.fired?.includes(i) ? { collapse: 'successRate fell', rollbacks: o.rollbacks ?? 0 } : {}),
  }));
  writeFileSync(join(dir, 'metrics.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  writeFileSync(
    join(dir, 'eval.json'),
    JSON.stringify({
      iteration: 4,
      results: greedy(0, 0),
      ...(o.best
        ? {
            best: {
              iteration: o.best.iteration,
              rule: 'successRate:max@10',
              value: 0.8,
              results: greedy(o.best.success, 0.7),
            },
          }
        : {}),
    }),
  );
  return dir;
}

describe('best checkpoints and collapses in the report', () => {
  it('puts the best beside the final per setting and counts the runs that collapsed', () => {
    const poad = summarise(
      {
        label: 'poad',
        runDirs: [
          run('poad-s1', { fired: [3], rollbacks: 1, best: { iteration: 2, success: 1 } }),
          run('poad-s2', { best: { iteration: 3, success: 0.5 } }),
          run('poad-s3', {}),
        ],
      },
      'food-preparation',
      1,
    );
    expect(poad.runs[0]!.best).toEqual({
      iteration: 2,
      greedy: { successRate: 1, meanReturn: 0.7 },
    });
    expect(poad.runs[0]!.collapses).toEqual({ alarms: 1, iterations: [3], rollbacks: 1 });
    expect(poad.runs[2]!.best).toBeUndefined();
    const md = markdown('t', 'compare …', [poad], 1);
    expect(md).toContain('## Best checkpoints and collapses');
    // Final 0, best over the two seeds that kept one: 0.700 and 75.0%; one run collapsed.
    expect(md).toMatch(
      /\| poad \| 3 \| 0\.000 \| 0\.700 \| 0\.0% \| 75\.0% \| 2 \| 1 \| 1 \| 1 \|/,
    );
    expect(md).toMatch(/\| poad-s1 \| 2 \| 3 \|/);
  });

  it("--checkpoint best takes the best checkpoints' evaluations for the greedy figures", () => {
    const runs = [run('choice-s1', { best: { iteration: 2, success: 1 } }), run('choice-s2', {})];
    const latest = summarise({ label: 'poad', runDirs: runs }, 'food-preparation', 1);
    const best = summarise({ label: 'poad', runDirs: runs }, 'food-preparation', 1, 'best');
    expect(latest.finalSuccess[0]).toBe(0);
    // Seed 1's best succeeded; seed 2 kept no best apart, so its latest counts.
    expect(best.finalSuccess[0]).toBe(0.5);
    expect(best.runs[0]!.greedy).toEqual({ successRate: 1, meanReturn: 0.7 });
  });

  it('leaves the section out when no run kept a best apart or collapsed', () => {
    const plain = summarise(
      { label: 'poad', runDirs: [run('plain-s1', {})] },
      'food-preparation',
      1,
    );
    expect(markdown('t', 'compare …', [plain], 1)).not.toContain('Best checkpoints');
    expect(Object.keys(plain.runs[0]!)).not.toContain('best');
    expect(Object.keys(plain.runs[0]!)).not.toContain('collapses');
  });
});
