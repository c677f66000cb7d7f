// Group runs made before group rollouts counted the episodes they cut: their sampled success is
// re-counted over every episode played, and the report says so.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { markdown, readRows, summarise, summariseRun, uncountedCuts } from '../src/report.js';

const root = mkdtempSync(join(tmpdir(), 'poad-cut-episodes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run folder with a config.json and these metrics rows. */
function run(name: string, config: object, rows: object[]): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'metrics.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return dir;
}

// Six iterations of 2 groups × 4 episodes: every ended episode succeeded, but only 4, then 8, of
// the 8 played ended within the step limit.
const ended = [4, 4, 8, 8, 8, 8];
const oldRows = ended.map((n, i) => ({
  iteration: i + 1,
  envSteps: 100 * (i + 1),
  episodes: n,
  episodeReturn: 1,
  successRate: 1,
}));

describe('group runs made before cut episodes were counted', () => {
  it('have their success re-counted over every episode played, the cut ones as failures', () => {
    const dir = run('grpo-old', { algo: 'grpo', groups: 2, groupSize: 4 }, oldRows);
    expect(uncountedCuts(dir)).toBe(8);
    const rows = readRows(dir);
    expect(rows.map((r) => r.successRate)).toEqual([0.5, 0.5, 1, 1, 1, 1]);
    expect(rows.map((r) => r.episodesCut)).toEqual([4, 4, 0, 0, 0, 0]);
    const s = summariseRun(dir, 'task');
    expect(s.successRecounted).toBe(true);
    // Running mean over 5 iterations: (0.5 + 0.5 + 1 + 1 + 1) / 5 = 0.8 at iteration 5, then 0.9.
    expect(s.sampledSuccessAt).toEqual([500, 600]);
  });

  it('leave newer group runs and other runs as they are', () => {
    const newer = run(
      'grpo-new',
      { algo: 'grpo', groups: 2, groupSize: 4 },
      oldRows.map((r, i) => ({ ...r, episodes: 8, successRate: ended[i]! / 8, episodesCut: 0 })),
    );
    const poad = run('poad', { algo: 'poad', envs: 8 }, oldRows);
    // An environment without success (DataSciCoding): nothing to re-count.
    const coding = run(
      'grpo-coding',
      { algo: 'grpo', groups: 1, groupSize: 4 },
      oldRows.map((r) => ({ ...r, successRate: null })),
    );
    expect(readRows(coding).map((r) => r.successRate)).toEqual(Array(6).fill(null));
    for (const dir of [newer, poad, coding]) {
      expect(uncountedCuts(dir)).toBeNull();
      expect(summariseRun(dir, 'task').successRecounted).toBeUndefined();
    }
    expect(readRows(poad).map((r) => r.successRate)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(summariseRun(poad, 'task').sampledSuccessAt).toEqual([500, 500]);
    expect(summariseRun(newer, 'task').sampledSuccessAt).toEqual([500, 600]);
  });

  it('are named in the report', () => {
    const old = join(root, 'grpo-old');
    const g = summarise({ label: 'grpo', runDirs: [old] }, 'task', undefined);
    const md = markdown('T', 'cmd', [g], undefined);
    expect(md).toContain('Sampled success re-counted for grpo-old:');
    const p = summarise({ label: 'poad', runDirs: [join(root, 'poad')] }, 'task', undefined);
    expect(markdown('T', 'cmd', [p], undefined)).not.toContain('re-counted');
  });
});
