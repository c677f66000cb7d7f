import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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

  it('keeps the earlier copy whole when a run fails to copy, and clears what a cut-off copy left', () => {
    const to = join(base, 'archive3');
    mkdirSync(join(to, 'poad-s3'), { recursive: true });
    writeFileSync(join(to, 'poad-s3', 'eval.json'), '{"earlier":true}');
    // Left by an archive killed while it copied a run.
    mkdirSync(join(to, '.poad-s9.part'), { recursive: true });
    const from = comparison(join(base, 'cmp3'), 'poad-s3', true);
    writeFileSync(join(from, 'poad-s3', 'eval.json'), '{"later":true}');
    // A FIFO cannot be copied: the run's copy fails after its other files (in any order).
    execFileSync('mkfifo', [join(from, 'poad-s3', 'pipe')]);
    expect(() => archiveComparison(from, to)).toThrow();
    expect(readdirSync(join(to, 'poad-s3'))).toEqual(['eval.json']);
    expect(readFileSync(join(to, 'poad-s3', 'eval.json'), 'utf8')).toBe('{"earlier":true}');
    expect(readdirSync(to)).not.toContain('.poad-s9.part');
    // Once the run can be copied, archiving again replaces it whole and leaves nothing aside.
    rmSync(join(from, 'poad-s3', 'pipe'));
    expect(archiveComparison(from, to)).toEqual({ finished: ['poad-s3'], unfinished: [] });
    expect(readFileSync(join(to, 'poad-s3', 'eval.json'), 'utf8')).toBe('{"later":true}');
    expect(readdirSync(to).sort()).toEqual(['compare.json', 'poad-s3']);
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
