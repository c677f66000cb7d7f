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
import { UserError } from '@poad/config';
import { injectCheckpointFault } from './checkpoint-faults.js';
import { writeFileAtomicWith } from './files.js';

/** What a checkpoint directory holds besides its files. */
export interface CheckpointMeta {
  iteration: number;
  [key: string]: unknown;
}

/** A complete checkpoint of a run directory. */
export interface CheckpointRef {
  /** Its directory, `RUN/checkpoints/iter-XXXXXXXX`. */
  dir: string;
  /** Its directory name, `iter-XXXXXXXX`. */
  name: string;
  /** Its `meta.json`. */
  meta: CheckpointMeta;
}

const NAME = /^iter-(\d{8})$/;

const REASONS: Record<string, [string, string]> = {
  ENOSPC: ['the disk is full', 'Free some disk space'],
  EDQUOT: ['the disk quota is used up', 'Free some space or raise the quota'],
  EACCES: ['no permission to write there', "Fix the folder's permissions (or run as its owner)"],
  EPERM: ['the operation is not permitted there', "Fix the folder's permissions"],
  EROFS: ['the file system is read-only', 'Move the run directory to a writable disk'],
};

/**
 * A checkpoint could not be written (disk full, no permission, …). Whatever was being written was
 * removed; the checkpoint `latest.json` names is untouched and still loads.
 */
export class CheckpointWriteError extends UserError {
  override readonly name = 'CheckpointWriteError';
  /** The system error code, e.g. `ENOSPC` or `EACCES`. */
  readonly code: string;

  constructor(
    /** The checkpoint directory that was being written. */
    readonly checkpoint: string,
    /** The latest complete checkpoint left in place, or null when there is none. */
    readonly previous: string | null,
    cause: NodeJS.ErrnoException,
  ) {
    const code = cause.code ?? 'EIO';
    const [reason, fix] = REASONS[code] ?? [cause.message, 'Fix the cause'];
    super(
      `cannot write checkpoint ${checkpoint}: ${reason} (${code}${cause.path ? `, ${cause.path}` : ''}). ${previous ? `The previous checkpoint ${previous} is intact` : 'No earlier checkpoint exists'}, and nothing half-written was left behind. ${fix}, then resume the run.`,
      { cause },
    );
    this.code = code;
  }
}

/** No checkpoint of a run directory could be loaded (each one is named with its problem). */
export class CheckpointLoadError extends UserError {
  override readonly name = 'CheckpointLoadError';
  constructor(
    readonly runDir: string,
    /** Every checkpoint tried, newest first, with the reason it was refused. */
    readonly failures: readonly { name: string; reason: string }[],
  ) {
    super(
      `no complete checkpoint in ${join(runDir, 'checkpoints')}: ${failures.map((f) => `${f.name}: ${f.reason}`).join('; ')}. Start a new run, or restore the checkpoints folder from a backup.`,
    );
  }
}

/**
 * Writes a checkpoint as `checkpoints/iter-XXXXXXXX/` inside a run directory. All files go into
 * a hidden temporary directory first, which is renamed into place only when complete, and
 * `checkpoints/latest.json` is then updated atomically — so a crash at any moment leaves either
 * the previous checkpoint or the new one, never a half-written one. Keeps the newest `keep`.
 * @throws CheckpointWriteError when the disk refuses a write (ENOSPC, EACCES, …), after removing
 *   what was written; other errors (e.g. from a check before writing) are rethrown as they are.
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
    cp.fail(err);
  }
  return cp.commit(options.keep ?? 3);
}

/**
 * Like {@link saveCheckpoint}, but `populate` writes the files itself into the (temporary)
 * checkpoint directory it is given, e.g. with a library's own save function. If `populate`
 * throws, the temporary directory is removed and the error rethrown (as a
 * {@link CheckpointWriteError} when it is a failed write).
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
    cp.fail(err);
  }
  return cp.commit(options.keep ?? 3);
}

/** A checkpoint being written: files go into `tmp`; `commit` moves it into place. */
function beginCheckpoint(runDir: string, meta: CheckpointMeta) {
  const root = join(runDir, 'checkpoints');
  const name = `iter-${String(meta.iteration).padStart(8, '0')}`;
  const tmp = join(root, `.${name}.${process.pid}.tmp`);
  const final = join(root, name);
  let renamed = false;
  /** Removes what this write left and rethrows, as a CheckpointWriteError for system errors. */
  const fail = (err: unknown): never => {
    rmSync(tmp, { recursive: true, force: true });
    // Renamed but not pointed to by latest.json: take it back out, the previous one stays latest.
    if (renamed) rmSync(final, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      throw new CheckpointWriteError(final, latestCheckpoint(runDir)?.dir ?? null, err as Error);
    }
    throw err;
  };
  try {
    mkdirSync(root, { recursive: true });
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
  } catch (err) {
    fail(err);
  }
  return {
    tmp,
    fail,
    commit(keep: number): string {
      const fault = (stage: Parameters<typeof injectCheckpointFault>[0], path: string) =>
        injectCheckpointFault(stage, meta.iteration, path);
      try {
        fault('files', tmp);
        const metaFile = join(tmp, 'meta.json');
        fault('meta', metaFile);
        writeFileSync(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
        fault('rename', final);
        rmSync(final, { recursive: true, force: true });
        renameSync(tmp, final);
        renamed = true;
        writeFileAtomicWith(
          join(root, 'latest.json'),
          `${JSON.stringify({ name, iteration: meta.iteration }, null, 2)}\n`,
          (t) => fault('latest', t),
        );
      } catch (err) {
        fail(err);
      }
      // Pruning is best effort: a failure leaves older checkpoints, which the next save prunes.
      try {
        fault('prune', root);
        const all = readdirSync(root)
          .filter((n) => NAME.test(n))
          .sort();
        for (const old of all.slice(0, Math.max(0, all.length - keep))) {
          if (old !== name) rmSync(join(root, old), { recursive: true, force: true });
        }
      } catch {
        // Kept for the next save.
      }
      return final;
    },
  };
}

/**
 * The complete checkpoints of a run directory (those with a readable `meta.json`), best first:
 * the one `latest.json` names, then the others from the newest. Empty when there are none.
 */
export function listCheckpoints(runDir: string): CheckpointRef[] {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return [];
  const names: string[] = [];
  try {
    const latest = JSON.parse(readFileSync(join(root, 'latest.json'), 'utf8')) as { name: string };
    if (typeof latest?.name === 'string' && NAME.test(latest.name)) names.push(latest.name);
  } catch {
    // No pointer (or unreadable): fall back to scanning.
  }
  for (const n of readdirSync(root)
    .filter((x) => NAME.test(x))
    .sort()
    .reverse()) {
    if (!names.includes(n)) names.push(n);
  }
  const found: CheckpointRef[] = [];
  for (const name of names) {
    const dir = join(root, name);
    try {
      const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as CheckpointMeta;
      if (typeof meta?.iteration === 'number') found.push({ dir, name, meta });
    } catch {
      // Incomplete or deleted: skip it.
    }
  }
  return found;
}

/** The newest complete checkpoint of a run directory, or `null` if there is none. */
export function latestCheckpoint(runDir: string): { dir: string; meta: CheckpointMeta } | null {
  const [best] = listCheckpoints(runDir);
  return best ? { dir: best.dir, meta: best.meta } : null;
}

/**
 * Loads the best checkpoint that `load` accepts: tries {@link listCheckpoints} in order, and when
 * `load` throws (a truncated or corrupted file, a non-finite value, …) warns and falls back to the
 * next one. `load` must leave no partial state behind that a later successful call would not
 * overwrite. Returns `null` when the run has no checkpoint.
 * @throws CheckpointLoadError when there are checkpoints but none loads, naming each one's problem.
 */
export async function loadCheckpoint<T>(
  runDir: string,
  load: (checkpoint: CheckpointRef) => T | Promise<T>,
  options: {
    warn?: (message: string) => void;
    /** The checkpoints to try, in order (default: {@link listCheckpoints}). */
    candidates?: readonly CheckpointRef[];
  } = {},
): Promise<(CheckpointRef & { value: T }) | null> {
  const all = options.candidates ?? listCheckpoints(runDir);
  const failures: { name: string; reason: string }[] = [];
  for (const [i, cp] of all.entries()) {
    try {
      const value = await load(cp);
      return { ...cp, value };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      failures.push({ name: cp.name, reason });
      const next = all[i + 1];
      if (next) {
        options.warn?.(
          `warning: checkpoint ${cp.name} cannot be loaded (${reason}); falling back to ${next.name}`,
        );
      }
    }
  }
  if (failures.length > 0) throw new CheckpointLoadError(runDir, failures);
  return null;
}

/**
 * Removes temporary files and directories left by a checkpoint write that was killed midway
 * (hidden `.…tmp` entries of `checkpoints/`). Only call it while no other process writes to
 * the run directory (hold its lock, see `lockRunDir`).
 */
export function cleanCheckpointLeftovers(runDir: string): number {
  const root = join(runDir, 'checkpoints');
  if (!existsSync(root)) return 0;
  let n = 0;
  for (const name of readdirSync(root)) {
    // The previous best checkpoint, set aside by a kill between two renames: it is the best.
    if (name === '.best.prev.tmp' && !existsSync(join(root, 'best'))) {
      renameSync(join(root, name), join(root, 'best'));
      continue;
    }
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
