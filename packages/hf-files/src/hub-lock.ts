import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

/** Options for {@link withFileLock}. */
export interface FileLockOptions {
  /** A lock whose holder stopped refreshing it this long ago is taken over (default 60 s). */
  staleMs?: number;
  /** Called once when the lock is held by another process and this one starts waiting. */
  onWait?: (holder: string) => void;
}

interface Holder {
  pid?: number;
  host?: string;
  nonce?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Run `fn` while holding an exclusive lock file at `path`, shared by every process on the machine
 * (and on other machines that share the folder). The lock is the file itself, created with
 * O_EXCL and removed on release; the holder touches it every `staleMs / 4`. A lock whose holder
 * died (same host, its process is gone) or stopped touching it for `staleMs` is taken over.
 */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? 60_000;
  const nonce = randomBytes(8).toString('hex');
  const me = JSON.stringify({ pid: process.pid, host: hostname(), nonce });
  await mkdir(dirname(path), { recursive: true });
  let waited = false;
  let pause = 50;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(me);
      } finally {
        await fh.close();
      }
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') throw e;
    }
    let holder: Holder = {};
    let age = 0;
    try {
      holder = JSON.parse(await readFile(path, 'utf8')) as Holder;
    } catch {
      // Being written or just removed: look again.
    }
    try {
      age = Date.now() - (await stat(path)).mtimeMs;
    } catch {
      continue;
    }
    const dead = holder.host === hostname() && typeof holder.pid === 'number' && !alive(holder.pid);
    if (dead || age > staleMs) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    if (!waited) {
      waited = true;
      options.onWait?.(holder.pid === undefined ? 'another process' : `process ${holder.pid}`);
    }
    await sleep(pause);
    pause = Math.min(pause * 2, 500);
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, staleMs / 4);
  heartbeat.unref();
  try {
    return await fn();
  } finally {
    clearInterval(heartbeat);
    try {
      // Remove the lock only while it is still ours (a stale take-over may have replaced it).
      if ((JSON.parse(await readFile(path, 'utf8')) as Holder).nonce === nonce) await unlink(path);
    } catch {
      // Already gone.
    }
  }
}
