import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomicSync } from './files.js';

/** What a checkpoint directory holds besides its files. */
export interface CheckpointMeta {
  iteration: number;
  [key: string]: unknown;
}

const NAME = /^iter-(\d{8})$/;

/**
 * Writes a checkpoint as `checkpoints/iter-XXXXXXXX/` inside a run directory. All files go into
 * a hidden temporary directory first, which is renamed into place only when complete, and
 * `checkpoints/latest.json` is then updated atomically — so a crash at any moment leaves either
 * the previous checkpoint or the new one, never a half-written one. Keeps the newest `keep`.
 */
export function saveCheckpoint(
  runDir: string,
  meta: CheckpointMeta,
  files: Record<string, string | Uint8Array>,
  options: { keep?: number } = {},
): string {
  const cp = beginCheckpoint(runDir, meta);
  try {
    for (const [file, data] of Object.entries(files)) {
      if (file.includes('..') || file.startsWith('/')) {
        throw new Error(`checkpoint file name ${file} must be relative`);
      }
      const path = join(cp.tmp, file);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, data);
    }
  } catch (err) {
    cp.abort();
    throw err;
  }
  return cp.commit(options.keep ?? 3);
}

/**
 * Like {@link saveCheckpoint}, but `populate` writes the files itself into the (temporary)
 * checkpoint directory it is given, e.g. with a library's own save function.
 */
export async function saveCheckpointWith(
  runDir: string,
  meta: CheckpointMeta,
  populate: (dir: string) => Promise<void>,
  options: { keep?: number } = {},
): Promise<string> {
  const cp = beginCheckpoint(runDir, meta);
  try {
    await populate(cp.tmp);
  } catch (err) {
    cp.abort();
    throw err;
  }
  return cp.commit(options.keep ?? 3);
}

/** A checkpoint being written: files go into `tmp`; `commit` moves it into place. */
function beginCheckpoint(runDir: string, meta: CheckpointMeta) {
  const root = join(runDir, 'checkpoints');
  mkdirSync(root, { recursive: true });
  const name = `iter-${String(meta.iteration).padStart(8, '0')}`;
  const tmp = join(root, `.${name}.${process.pid}.tmp`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  return {
    tmp,
    abort: () => rmSync(tmp, { recursive: true, force: true }),
    commit(keep: number): string {
      writeFileSync(join(tmp, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
      const final = join(root, name);
      rmSync(final, { recursive: true, force: true });
      renameSync(tmp, final);
      writeJsonAtomicSync(join(root, 'latest.json'), { name, iteration: meta.iteration });
      const all = readdirSync(root)
        .filter((n) => NAME.test(n))
        .sort();
      for (const old of all.slice(0, Math.max(0, all.length - keep))) {
        if (old !== name) rmSync(join(root, old), { recursive: true, force: true });
      }
      return final;
    },
  };
}

/** The newest complete checkpoint of a run directory, or `null` if there is none. */
export function latestCheckpoint(runDir: string): { dir: string; meta: CheckpointMeta } | null {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return null;
  const candidates: string[] = [];
  try {
    const latest = JSON.parse(readFileSync(join(root, 'latest.json'), 'utf8')) as { name: string };
    candidates.push(latest.name);
  } catch {
    // No pointer (or unreadable): fall back to scanning.
  }
  candidates.push(
    ...readdirSync(root)
      .filter((n) => NAME.test(n))
      .sort()
      .reverse(),
  );
  for (const name of candidates) {
    const dir = join(root, name);
    try {
      const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as CheckpointMeta;
      return { dir, meta };
    } catch {
      // Incomplete or deleted: try the next one.
    }
  }
  return null;
}

/** Removes temporary directories left by a checkpoint write that was killed midway. */
export function cleanCheckpointLeftovers(runDir: string): number {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return 0;
  let n = 0;
  for (const name of readdirSync(root)) {
    if (name.startsWith('.') && name.endsWith('.tmp')) {
      rmSync(join(root, name), { recursive: true, force: true });
      n++;
    }
  }
  return n;
}

/** Renames `from` to `to`, replacing it (used to move finished outputs into place). */
export function replaceDir(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  renameSync(from, to);
}
