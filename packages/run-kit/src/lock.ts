import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { UserError } from '@poad/config';

/** Who holds a run directory's lock, as written in its `run.lock` file. */
export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
  /** The holder's command line. */
  argv: string[];
  /** Identifies this acquisition (a pid can be reused). */
  nonce: string;
}

/** A held run-directory lock. */
export interface RunLock {
  /** The lock file, `RUN_DIR/run.lock`. */
  readonly path: string;
  /** Removes the lock (only if it is still this process's); safe to call twice. */
  release(): void;
}

/** Another live process trains (or resumes) the same run directory. */
export class RunLockedError extends UserError {
  override readonly name = 'RunLockedError';
  constructor(
    readonly runDir: string,
    readonly holder: LockHolder,
    sameHost: boolean,
  ) {
    super(
      `run directory ${runDir} is in use by process ${holder.pid}${sameHost ? '' : ` on host ${holder.host}`} (started ${holder.startedAt}: ${holder.argv.join(' ') || '?'}); two processes writing one run would interleave its metrics and checkpoints. Wait for it to finish or stop it${sameHost ? '' : ' (its liveness cannot be checked from here)'}; if no such process trains this run, delete ${join(runDir, LOCK_FILE)}.`,
    );
  }
}

const LOCK_FILE = 'run.lock';

function readHolder(path: string): LockHolder | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return Number.isInteger(h?.pid) && typeof h.nonce === 'string' ? h : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Whether process `pid` exists on this machine (a process of another user counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the holder is live: its process exists, or it is on another host (cannot be checked). */
function live(h: LockHolder): boolean {
  return h.host !== hostname() || alive(h.pid);
}

/**
 * The live holder of a run directory's lock, or `null` when it is free (no lock, or a stale one
 * whose process is gone). Reads only; use {@link lockRunDir} to take the lock.
 */
export function runDirLockHolder(runDir: string): LockHolder | null {
  const h = readHolder(join(runDir, LOCK_FILE));
  return h !== null && h !== 'unreadable' && live(h) ? h : null;
}

/**
 * Takes the lock of a run directory for this process: `RUN_DIR/run.lock` holds the pid, host,
 * start time and command line, and is created atomically (a complete file is hard-linked into
 * place, which fails if one exists). A lock whose process is gone (same host) is stale: it is
 * taken over after `onStale` is told. The lock is removed by `release()` and, if the process
 * exits without it (an error, `process.exit`), by an exit handler; after `kill -9` it stays and is
 * stale. A lock file that is not valid JSON counts as stale.
 * @throws RunLockedError naming the holder's pid when another live process holds it (this
 *   process holding it already counts too).
 */
export function lockRunDir(
  runDir: string,
  options: { onStale?: (holder: LockHolder | null) => void } = {},
): RunLock {
  const path = join(runDir, LOCK_FILE);
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    argv: process.argv.slice(2),
    nonce: randomBytes(8).toString('hex'),
  };
  const content = `${JSON.stringify(me)}\n`;
  const mine = join(runDir, `.${LOCK_FILE}.${me.pid}.${me.nonce}.tmp`);
  writeFileSync(mine, content);
  /** Puts this process's lock in place; false when a lock exists. */
  const place = (): boolean => {
    try {
      linkSync(mine, path);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (!['EPERM', 'ENOTSUP', 'ENOSYS', 'EXDEV'].includes(code ?? '')) throw err;
    }
    // A file system without hard links: an exclusive create (briefly empty while written).
    try {
      writeFileSync(path, content, { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  };
  try {
    for (let attempt = 0; !place(); attempt++) {
      if (attempt >= 8) throw new Error(`cannot take the lock ${path}: it keeps changing hands`);
      const holder = readHolder(path);
      if (holder === null) continue; // released in between: try again
      if (holder !== 'unreadable' && live(holder))
        throw new RunLockedError(runDir, holder, holder.host === me.host);
      // Stale: move it aside, and make sure what was moved is the stale lock read above, not a
      // fresh one another process took over in between (put that one back).
      const aside = join(runDir, `.${LOCK_FILE}.stale.${me.pid}.${me.nonce}.tmp`);
      try {
        renameSync(path, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      const moved = readHolder(aside);
      const same =
        holder === 'unreadable'
          ? moved === 'unreadable'
          : moved !== null && moved !== 'unreadable' && moved.nonce === holder.nonce;
      if (same) {
        options.onStale?.(holder === 'unreadable' ? null : holder);
      } else {
        try {
          linkSync(aside, path);
        } catch {
          // A third process took it meanwhile; the next attempt reports whoever holds it.
        }
      }
      rmSync(aside, { force: true });
    }
  } finally {
    rmSync(mine, { force: true });
  }
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    const h = readHolder(path);
    if (h !== null && h !== 'unreadable' && h.nonce === me.nonce) rmSync(path, { force: true });
  };
  process.on('exit', release);
  return { path, release };
}
