import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { archiveComparison } from '../src/archive.js';

const base = mkdtempSync(join(tmpdir(), 'poad-archive-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A comparison folder with one run, finished (an eval.json) or not. */
function comparison(dir: string, run: string, done: boolean): string {
  mkdirSync(join(dir, run), { recursive: true });
  writeFileSync(join(dir, 'compare.json'), '{}');
  writeFileSync(join(dir, run, 'config.json'), '{}');
  writeFileSync(join(dir, run, 'metrics.jsonl'), '{"iteration":1}\n');
  if (done) writeFileSync(join(dir, run, 'eval.json'), '{}');
  return dir;
}

describe('archiveComparison', () => {
  it('replaces a run archived earlier, so the checkpoints of its cut-off copy do not linger', () => {
    const to = join(base, 'archive');
    // An earlier archive holds the run cut off, with a checkpoint and a file the run no longer has.
    mkdirSync(join(to, 'poad-s1', 'checkpoints', 'iter-00000146'), { recursive: true });
    writeFileSync(join(to, 'poad-s1', 'checkpoints', 'latest.json'), '{"name":"iter-00000146"}');
    writeFileSync(join(to, 'poad-s1', 'stale.txt'), 'old');
    const from = comparison(join(base, 'cmp'), 'poad-s1', true);
    expect(archiveComparison(from, to)).toEqual({ finished: ['poad-s1'], unfinished: [] });
    expect(readdirSync(join(to, 'poad-s1')).sort()).toEqual([
      'config.json',
      'eval.json',
      'metrics.jsonl',
    ]);
  });

  it('leaves a run it does not copy as it is, and refuses to archive a comparison onto itself', () => {
    const to = join(base, 'archive2');
    mkdirSync(join(to, 'poad-s2'), { recursive: true });
    writeFileSync(join(to, 'poad-s2', 'eval.json'), '{}');
    // Unfinished and without a checkpoint: not copied, so the archived copy stays.
    const from = comparison(join(base, 'cmp2'), 'poad-s2', false);
    expect(archiveComparison(from, to, { unfinished: true })).toEqual({
      finished: [],
      unfinished: [],
    });
    expect(existsSync(join(to, 'poad-s2', 'eval.json'))).toBe(true);
    expect(() => archiveComparison(from, from)).toThrow(/overwrite the comparison itself/);
    expect(existsSync(join(from, 'poad-s2', 'config.json'))).toBe(true);
  });
});
