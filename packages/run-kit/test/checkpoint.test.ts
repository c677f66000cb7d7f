// Fault injection into checkpoint writing: kill -9 at each stage (in a child process that kills
// itself where the test says), writes failing with ENOSPC / EACCES, and loading that falls back
// past a corrupted checkpoint.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@poad/dev-kit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CheckpointLoadError,
  CheckpointWriteError,
  cleanCheckpointLeftovers,
  latestCheckpoint,
  listCheckpoints,
  loadCheckpoint,
  saveCheckpoint,
  saveCheckpointWith,
} from '../src/checkpoint.js';

const tmp = tempDirs('run-kit-cp-');
afterEach(() => {
  delete process.env.POAD_TEST_CHECKPOINT_FAULT;
});

const child = new URL('./checkpoint-child.ts', import.meta.url).pathname;
const entries = (d: string) => readdirSync(join(d, 'checkpoints')).sort();
/** The checkpoint latestCheckpoint picks, with its files read back. */
const loaded = (d: string) => {
  const cp = latestCheckpoint(d)!;
  return {
    iteration: cp.meta.iteration,
    w: [...readFileSync(join(cp.dir, 'w.bin'))],
    state: JSON.parse(readFileSync(join(cp.dir, 'state.json'), 'utf8')),
  };
};
const complete = (it: number) => ({ iteration: it, w: [it, it, it], state: { it } });

/** Where a write can be stopped (`POAD_TEST_CHECKPOINT_FAULT`), in the order they happen. */
const STAGES = ['files', 'meta', 'rename', 'latest', 'prune'] as const;

describe('kill -9 inside a checkpoint write', () => {
  for (const stage of STAGES) {
    it(`at "${stage}": a complete checkpoint still loads, and the leftovers are cleaned`, () => {
      const d = tmp();
      const r = spawnSync(process.execPath, ['--import', 'tsx', child, 'save', d], {
        env: { ...process.env, VITEST: 'true', POAD_TEST_CHECKPOINT_FAULT: `${stage}:kill@2` },
        encoding: 'utf8',
      });
      expect(r.signal, r.stderr).toBe('SIGKILL');
      expect(r.stdout).not.toContain('saved');
      // Until latest.json is replaced the previous checkpoint is the latest; after, the new one.
      const expected = stage === 'prune' ? 2 : 1;
      expect(loaded(d)).toEqual(complete(expected));
      // Killed mid-write: a hidden temporary directory or file is left until the next resume.
      expect(cleanCheckpointLeftovers(d)).toBe(stage === 'prune' ? 0 : 1);
      expect(entries(d).filter((n) => n.startsWith('.'))).toEqual([]);
      // Writing goes on normally afterwards.
      saveCheckpoint(
        d,
        { iteration: 2 },
        { 'w.bin': new Uint8Array([2, 2, 2]), 'state.json': '{"it":2}' },
      );
      expect(loaded(d)).toEqual(complete(2));
      expect(entries(d)).toEqual(['iter-00000001', 'iter-00000002', 'latest.json']);
    });
  }
});

describe('a checkpoint write that fails', () => {
  const write = (d: string, it: number) =>
    saveCheckpointWith(d, { iteration: it }, async (dir) => saveFiles(dir, it));
  for (const stage of ['files', 'meta', 'rename', 'latest'] as const) {
    for (const action of ['enospc', 'eacces'] as const) {
      it(`with ${action.toUpperCase()} at "${stage}": a clear error, the previous checkpoint intact, no temp files`, async () => {
        const d = tmp();
        await write(d, 1);
        process.env.POAD_TEST_CHECKPOINT_FAULT = `${stage}:${action}@2`;
        const err = await write(d, 2).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, 'the failed write was reported as a success').not.toBeNull();
        expect(loaded(d)).toEqual(complete(1));
        expect(entries(d)).toEqual(['iter-00000001', 'latest.json']);
        expect(err).toBeInstanceOf(CheckpointWriteError);
        const e = err as CheckpointWriteError;
        expect(e.code).toBe(action.toUpperCase());
        expect(e.message).toContain(join(d, 'checkpoints', 'iter-00000002'));
        expect(e.message).toMatch(
          action === 'enospc'
            ? /the disk is full .*Free some disk space/
            : /no permission to write there/,
        );
        expect(e.message).toContain(
          `previous checkpoint ${join(d, 'checkpoints', 'iter-00000001')} is intact`,
        );
      });
    }
  }

  it('a failed write of the first checkpoint leaves nothing behind', () => {
    const d = tmp();
    process.env.POAD_TEST_CHECKPOINT_FAULT = 'meta:enospc';
    let err: unknown = null;
    try {
      saveCheckpoint(d, { iteration: 1 }, { 'w.bin': 'x' });
    } catch (e) {
      err = e;
    }
    expect(err, 'the failed write was reported as a success').not.toBeNull();
    expect(entries(d)).toEqual([]);
    expect(err).toBeInstanceOf(CheckpointWriteError);
    expect((err as Error).message).toMatch(/No earlier checkpoint exists/);
  });

  it('pruning is best effort: a failure there keeps the new checkpoint and the old ones', async () => {
    const d = tmp();
    for (let it = 1; it <= 2; it++) await write(d, it);
    process.env.POAD_TEST_CHECKPOINT_FAULT = 'prune:enospc';
    await saveCheckpointWith(d, { iteration: 3 }, async (dir) => saveFiles(dir, 3), { keep: 1 });
    expect(loaded(d)).toEqual(complete(3));
    expect(entries(d)).toEqual(['iter-00000001', 'iter-00000002', 'iter-00000003', 'latest.json']);
  });

  it('errors that are not failed writes pass through unchanged, and nothing is left', async () => {
    const d = tmp();
    await write(d, 1);
    await expect(
      saveCheckpointWith(d, { iteration: 2 }, async () => {
        throw new RangeError('not finite');
      }),
    ).rejects.toThrow(RangeError);
    expect(entries(d)).toEqual(['iter-00000001', 'latest.json']);
  });

  it('the fault variable is ignored outside the test runner', () => {
    const d = tmp();
    const r = spawnSync(process.execPath, ['--import', 'tsx', child, 'save', d], {
      env: { ...process.env, VITEST: '', POAD_TEST_CHECKPOINT_FAULT: 'rename:kill' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(loaded(d)).toEqual(complete(2));
  });
});

describe('loadCheckpoint', () => {
  const three = async (d: string) => {
    for (let it = 1; it <= 3; it++)
      await saveCheckpointWith(d, { iteration: it }, async (dir) => saveFiles(dir, it));
  };
  /** Loads like an app: parses the JSON (throws when it is broken) and checks the weights' size. */
  const load = (cp: { dir: string }) => {
    const state = JSON.parse(readFileSync(join(cp.dir, 'state.json'), 'utf8')) as { it: number };
    if (readFileSync(join(cp.dir, 'w.bin')).length !== 3) throw new Error('w.bin is truncated');
    return state.it;
  };

  it('falls back past corrupted checkpoints with a warning', async () => {
    const d = tmp();
    await three(d);
    writeFileSync(join(d, 'checkpoints', 'iter-00000003', 'state.json'), '{"it":');
    writeFileSync(join(d, 'checkpoints', 'iter-00000002', 'w.bin'), new Uint8Array([2]));
    const warnings: string[] = [];
    const got = await loadCheckpoint(d, load, { warn: (m) => warnings.push(m) });
    expect(got?.value).toBe(1);
    expect(got?.name).toBe('iter-00000001');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /checkpoint iter-00000003 cannot be loaded \(.*JSON.*\); falling back to iter-00000002/,
    );
    expect(warnings[1]).toMatch(
      /iter-00000002 cannot be loaded \(w.bin is truncated\); falling back to iter-00000001/,
    );
  });

  it('refuses with every problem named when no checkpoint loads, and returns null when there is none', async () => {
    const d = tmp();
    expect(await loadCheckpoint(d, load)).toBeNull();
    await three(d);
    for (const it of [1, 2, 3])
      writeFileSync(join(d, 'checkpoints', `iter-0000000${it}`, 'w.bin'), new Uint8Array([]));
    const err = await loadCheckpoint(d, load).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CheckpointLoadError);
    expect((err as Error).message).toMatch(
      /no complete checkpoint in .*iter-00000003: w.bin is truncated; iter-00000002: .*; iter-00000001: .*Start a new run/,
    );
  });

  it('tries the checkpoint latest.json names first, then the others from the newest', async () => {
    const d = tmp();
    await three(d);
    writeFileSync(
      join(d, 'checkpoints', 'latest.json'),
      JSON.stringify({ name: 'iter-00000002', iteration: 2 }),
    );
    expect(listCheckpoints(d).map((c) => c.name)).toEqual([
      'iter-00000002',
      'iter-00000003',
      'iter-00000001',
    ]);
  });
});

/** The files of checkpoint `it` (as the child process writes them). */
function saveFiles(dir: string, it: number): void {
  writeFileSync(join(dir, 'w.bin'), new Uint8Array([it, it, it]));
  writeFileSync(join(dir, 'state.json'), `{"it":${it}}`);
}
