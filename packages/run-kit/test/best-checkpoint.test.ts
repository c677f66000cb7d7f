import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import {
  bestCheckpoint,
  checkpointsFor,
  parseCheckpointChoice,
  saveBestCheckpoint,
} from '../src/best-checkpoint.js';
import { cleanCheckpointLeftovers, saveCheckpoint } from '../src/checkpoint.js';

const runDir = tempDirs('poad-best-', { until: 'file' });
const writeState = (text: string) => async (dir: string) => {
  writeFileSync(join(dir, 'state.txt'), text);
};

describe('the best checkpoint', () => {
  it('replaces the previous best and keeps what made it best', async () => {
    const run = runDir();
    await saveBestCheckpoint(run, { iteration: 3, best: { value: 0.5 } }, writeState('three'));
    await saveBestCheckpoint(run, { iteration: 7, best: { value: 0.8 } }, writeState('seven'));
    const best = bestCheckpoint(run)!;
    expect(best.meta).toMatchObject({ iteration: 7, best: { value: 0.8 } });
    expect(readFileSync(join(best.dir, 'state.txt'), 'utf8')).toBe('seven');
  });

  it('survives a write that fails midway: the previous best stays, nothing half-written', async () => {
    const run = runDir();
    await saveBestCheckpoint(run, { iteration: 3 }, writeState('three'));
    await expect(
      saveBestCheckpoint(run, { iteration: 9 }, async (dir) => {
        writeFileSync(join(dir, 'state.txt'), 'nine, half');
        throw new Error('killed while writing');
      }),
    ).rejects.toThrow('killed while writing');
    expect(bestCheckpoint(run)?.meta.iteration).toBe(3);
    expect(readFileSync(join(bestCheckpoint(run)!.dir, 'state.txt'), 'utf8')).toBe('three');
    expect(existsSync(join(run, 'checkpoints', `.best.${process.pid}.tmp`))).toBe(false);
  });

  it('takes back a previous best that a kill between the two renames left aside', async () => {
    const run = runDir();
    await saveBestCheckpoint(run, { iteration: 3 }, writeState('three'));
    // What a kill right after the first rename leaves: no best/, the old one set aside.
    renameSync(join(run, 'checkpoints', 'best'), join(run, 'checkpoints', '.best.prev.tmp'));
    expect(cleanCheckpointLeftovers(run)).toBe(0);
    expect(bestCheckpoint(run)?.meta.iteration).toBe(3);
    renameSync(join(run, 'checkpoints', 'best'), join(run, 'checkpoints', '.best.prev.tmp'));
    expect(bestCheckpoint(run)?.meta.iteration).toBe(3);
  });

  for (const stage of ['best-aside', 'best-swap'] as const)
    it(`survives kill -9 at "${stage}" of its write: the previous best loads, nothing is left over`, () => {
      const run = runDir();
      const child = new URL('./checkpoint-child.ts', import.meta.url).pathname;
      const r = spawnSync(process.execPath, ['--import', 'tsx', child, 'best', run], {
        env: { ...process.env, VITEST: 'true', POAD_TEST_CHECKPOINT_FAULT: `${stage}:kill@2` },
        encoding: 'utf8',
      });
      expect(r.signal, r.stderr).toBe('SIGKILL');
      expect(r.stdout).not.toContain('saved');
      // Killed before the new best was renamed into place: the previous best is the best.
      const best = bestCheckpoint(run)!;
      expect(best.meta.iteration).toBe(1);
      expect(JSON.parse(readFileSync(join(best.dir, 'state.json'), 'utf8'))).toEqual({ it: 1 });
      cleanCheckpointLeftovers(run);
      expect(readdirSync(join(run, 'checkpoints')).sort()).toEqual(['best']);
    });

  it('--checkpoint picks latest (with fallbacks), best or iter-N, and names what a run has', async () => {
    const run = runDir();
    for (const i of [1, 2, 3])
      saveCheckpoint(run, { iteration: i }, { 'x.txt': String(i) }, { keep: 2 });
    expect(checkpointsFor(run, 'latest').map((c) => c.meta.iteration)).toEqual([3, 2]);
    expect(() => checkpointsFor(run, 'best')).toThrow(/keeps no best checkpoint.*iter-3, iter-2/);
    await saveBestCheckpoint(run, { iteration: 1 }, writeState('one'));
    expect(checkpointsFor(run, 'best').map((c) => c.name)).toEqual(['best']);
    expect(checkpointsFor(run, 'iter-2').map((c) => c.meta.iteration)).toEqual([2]);
    // A pruned iteration that is the best is found as the best.
    expect(checkpointsFor(run, 'iter-1').map((c) => c.name)).toEqual(['best']);
    expect(() => checkpointsFor(run, 'iter-9')).toThrow(
      /no such checkpoint; it has: iter-3, iter-2, best/,
    );
    expect(parseCheckpointChoice('iter-40')).toBe('iter-40');
    expect(() => parseCheckpointChoice('newest')).toThrow(/use latest, best or iter-N/);
  });
});
