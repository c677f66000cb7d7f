import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let counter = 0;

/**
 * Write a file so that readers see either the old contents or the complete new contents, never a
 * partial file: the bytes go to a temporary file in the same folder, are flushed to disk, and the
 * temporary file is renamed over the target. On failure the temporary file is removed and the
 * target is left as it was.
 */
export async function writeFileAtomic(path: string, contents: Uint8Array | string): Promise<void> {
  const dir = dirname(path);
  counter = (counter + 1) % 1_000_000_000;
  const tmp = join(
    dir,
    `.${basename(path)}.tmp-${process.pid}-${counter}-${process.hrtime.bigint().toString(36)}`,
  );
  const fh = await open(tmp, 'wx');
  let renamed = false;
  try {
    await fh.writeFile(contents);
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    }
  }
  await syncDir(dir);
}

/** Flush a folder entry so a completed rename survives a crash (best effort: not all systems allow it). */
async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some platforms (Windows) cannot open or flush a folder; the rename itself is still atomic.
  }
}
