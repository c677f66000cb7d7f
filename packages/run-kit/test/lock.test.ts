// The run-directory lock: refused while a live process holds it (naming its pid), taken over
// with a warning when its process is gone, released on exit.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDirs } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import { type LockHolder, lockRunDir, RunLockedError, runDirLockHolder } from '../src/lock.js';

const tmp = tempDirs('run-kit-lock-');

const child = new URL('./checkpoint-child.ts', import.meta.url).pathname;
const holder = (pid: number, host = hostname()): LockHolder => ({
  pid,
  host,
  startedAt: '2026-01-01T00:00:00.000Z',
  argv: ['--resume', 'runs/x'],
  nonce: 'n0',
});
const writeLock = (d: string, h: LockHolder) =>
  writeFileSync(join(d, 'run.lock'), JSON.stringify(h));
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;

describe('lockRunDir', () => {
  it('refuses a second holder, naming its pid, until the first releases', () => {
    const d = tmp();
    const lock = lockRunDir(d);
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).pid).toBe(process.pid);
    expect(runDirLockHolder(d)?.pid).toBe(process.pid);
    expect(() => lockRunDir(d)).toThrow(RunLockedError);
    expect(() => lockRunDir(d)).toThrow(`in use by process ${process.pid} (`);
    lock.release();
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    expect(runDirLockHolder(d)).toBeNull();
    lockRunDir(d).release();
  });

  it('refuses a lock held by another live process', () => {
    const d = tmp();
    writeLock(d, holder(process.ppid));
    const err = (() => {
      try {
        lockRunDir(d);
      } catch (e) {
        return e;
      }
    })() as RunLockedError;
    expect(err).toBeInstanceOf(RunLockedError);
    expect(err.holder.pid).toBe(process.ppid);
    expect(err.message).toMatch(
      new RegExp(
        `in use by process ${process.ppid} \\(started .*--resume runs/x\\).*delete .*run\\.lock`,
      ),
    );
    // Nothing was changed, and no temporary file is left.
    expect(readdirSync(d)).toEqual(['run.lock']);
    expect(JSON.parse(readFileSync(join(d, 'run.lock'), 'utf8')).pid).toBe(process.ppid);
    expect(runDirLockHolder(d)?.pid).toBe(process.ppid);
  });

  it('treats a lock from another host as held (its process cannot be checked)', () => {
    const d = tmp();
    writeLock(d, holder(deadPid(), 'elsewhere.example'));
    expect(() => lockRunDir(d)).toThrow(/on host elsewhere\.example/);
  });

  it('takes over a stale lock (its process is gone) and says so', () => {
    const d = tmp();
    const dead = deadPid();
    writeLock(d, holder(dead));
    expect(runDirLockHolder(d)).toBeNull();
    const stale: (LockHolder | null)[] = [];
    const lock = lockRunDir(d, { onStale: (h) => stale.push(h) });
    expect(stale.map((h) => h?.pid)).toEqual([dead]);
    expect(runDirLockHolder(d)?.pid).toBe(process.pid);
    lock.release();
    // A lock file that is not a lock (e.g. garbage) is stale too.
    writeFileSync(join(d, 'run.lock'), 'not json');
    const again = lockRunDir(d, { onStale: (h) => stale.push(h) });
    expect(stale).toHaveLength(2);
    expect(stale[1]).toBeNull();
    again.release();
  });

  it('a killed holder leaves a stale lock; one that exits releases it', async () => {
    const d = tmp();
    const p = spawn(process.execPath, ['--import', 'tsx', child, 'lock', d], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const closed = new Promise((ok) => p.on('close', ok));
    try {
      // Wait for the child to say it holds the lock (starting tsx may take seconds on a loaded
      // machine); a child that exits first fails the test with what it printed.
      let printed = '';
      p.stderr.on('data', (b) => {
        printed += String(b);
      });
      await new Promise<void>((ok, fail) => {
        p.stdout.on('data', (b) => String(b).includes('locked') && ok());
        p.on('exit', (code, signal) =>
          fail(new Error(`the lock holder exited (${code ?? signal}) before locking: ${printed}`)),
        );
      });
      expect(runDirLockHolder(d)?.pid).toBe(p.pid);
      expect(() => lockRunDir(d)).toThrow(`in use by process ${p.pid}`);
    } finally {
      // Killed here, also when a check above fails: it would otherwise wait forever.
      p.kill('SIGKILL');
    }
    await closed;
    expect(existsSync(join(d, 'run.lock'))).toBe(true);
    expect(runDirLockHolder(d)).toBeNull();
    const warned: number[] = [];
    lockRunDir(d, { onStale: (h) => warned.push(h!.pid) }).release();
    expect(warned).toEqual([p.pid]);
    // Exiting without release (process.exit, an uncaught error) removes the lock.
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${new URL('../src/lock.ts', import.meta.url).pathname}').then((m) => { m.lockRunDir(${JSON.stringify(d)}); process.exit(3); })`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(3);
    expect(existsSync(join(d, 'run.lock'))).toBe(false);
  });
});
