import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import { cleanCheckpointLeftovers, latestCheckpoint, saveCheckpoint } from '../src/checkpoint.js';
import { writeFileAtomicSync } from '../src/files.js';
import { MetricsLog } from '../src/metrics.js';

const tmp = tempDirs('run-kit-');

describe('atomic files', () => {
  it('replaces content and leaves no temporary files', () => {
    const d = tmp();
    writeFileAtomicSync(join(d, 'a.txt'), 'one');
    writeFileAtomicSync(join(d, 'a.txt'), new Uint8Array([116, 119, 111]));
    expect(readFileSync(join(d, 'a.txt'), 'utf8')).toBe('two');
    expect(readdirSync(d)).toEqual(['a.txt']);
  });
});

describe('MetricsLog', () => {
  it('appends JSONL and rewrites CSV with the union of columns', () => {
    const d = tmp();
    const log = MetricsLog.open(d);
    log.append({ iteration: 1, return: 0.5 });
    log.append({ iteration: 2, return: 0.75, note: 'a,b' });
    expect(readFileSync(join(d, 'metrics.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    expect(readFileSync(join(d, 'metrics.csv'), 'utf8')).toBe(
      'iteration,return,note\n1,0.5,\n2,0.75,"a,b"\n',
    );
  });

  it('drops a torn last line and rows after the resumed iteration', () => {
    const d = tmp();
    writeFileSync(
      join(d, 'metrics.jsonl'),
      '{"iteration":1,"x":1}\n{"iteration":2,"x":2}\n{"iteration":3,"x":3}\n{"iterat',
    );
    const log = MetricsLog.open(d, { upToIteration: 2 });
    expect(log.rows.map((r) => r.iteration)).toEqual([1, 2]);
    log.append({ iteration: 3, x: 30 });
    const lines = readFileSync(join(d, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).x)).toEqual([1, 2, 30]);
  });
});

describe('checkpoints', () => {
  it('saves complete directories, points latest.json at the newest and keeps the last N', () => {
    const d = tmp();
    for (let it = 1; it <= 4; it++)
      saveCheckpoint(
        d,
        { iteration: it },
        { 'a/b.bin': new Uint8Array([it]), 'c.json': '{}' },
        { keep: 2 },
      );
    const found = latestCheckpoint(d)!;
    expect(found.meta.iteration).toBe(4);
    expect(readFileSync(join(found.dir, 'a/b.bin'))[0]).toBe(4);
    expect(readdirSync(join(d, 'checkpoints')).sort()).toEqual([
      'iter-00000003',
      'iter-00000004',
      'latest.json',
    ]);
  });

  it('ignores a half-written checkpoint and falls back when latest.json points at a broken one', () => {
    const d = tmp();
    saveCheckpoint(d, { iteration: 1 }, { 'x.bin': 'ok' });
    // A write killed midway leaves only a hidden temporary directory.
    saveCheckpoint(d, { iteration: 2 }, { 'x.bin': 'ok2' });
    rmSync(join(d, 'checkpoints', 'iter-00000002', 'meta.json'));
    writeFileSync(join(d, 'checkpoints', '.iter-00000003.999.tmp'), 'partial');
    expect(latestCheckpoint(d)!.meta.iteration).toBe(1);
    expect(cleanCheckpointLeftovers(d)).toBe(1);
  });

  it('returns null for a run without checkpoints and rejects escaping file names', () => {
    const d = tmp();
    expect(latestCheckpoint(d)).toBeNull();
    expect(() => saveCheckpoint(d, { iteration: 1 }, { '../evil': 'x' })).toThrow(/relative/);
  });
});

describe('saveCheckpointWith', () => {
  it('lets a callback fill the directory and discards it if the callback fails', async () => {
    const { saveCheckpointWith } = await import('../src/checkpoint.js');
    const d = tmp();
    await saveCheckpointWith(d, { iteration: 1 }, async (dir) =>
      writeFileSync(join(dir, 'w.bin'), 'w1'),
    );
    await expect(
      saveCheckpointWith(d, { iteration: 2 }, async (dir) => {
        writeFileSync(join(dir, 'w.bin'), 'half');
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    const found = latestCheckpoint(d)!;
    expect(found.meta.iteration).toBe(1);
    expect(readFileSync(join(found.dir, 'w.bin'), 'utf8')).toBe('w1');
    expect(readdirSync(join(d, 'checkpoints')).sort()).toEqual(['iter-00000001', 'latest.json']);
  });
});
