import { copyFile, mkdir, readFile, rename, stat, symlink, unlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { getRepoFolderName } from '@huggingface/hub';
import { writeFileAtomic } from './atomic.js';
import { isCommitHash } from './hub-id.js';

/**
 * The cache layout of Python's `huggingface_hub`, shared with it:
 *
 * ```
 * <cacheDir>/models--ORG--NAME/
 *   blobs/<etag>                      file contents, named by ETag (sha256 for LFS files, git oid otherwise)
 *   blobs/<etag>.incomplete           a download in progress (resumed with an HTTP Range request)
 *   refs/<revision>                   the commit hash a branch or tag pointed to
 *   snapshots/<commit>/<file>         relative symlink to ../../blobs/<etag>
 * <cacheDir>/.locks/models--ORG--NAME/<etag>.lock   (Python's lock; this package uses <etag>.poad-lock beside it)
 * ```
 */
export interface RepoCache {
  /** The cache root. */
  cacheDir: string;
  /** `ORG/NAME`. */
  repo: string;
  /** `<cacheDir>/models--ORG--NAME`. */
  folder: string;
}

/** The cache folder of a model repository. */
export function repoCache(cacheDir: string, repo: string): RepoCache {
  return {
    cacheDir,
    repo,
    folder: join(cacheDir, getRepoFolderName({ type: 'model', name: repo })),
  };
}

/** `blobs/<etag>`. */
export const blobPath = (c: RepoCache, etag: string): string => join(c.folder, 'blobs', etag);
/** `snapshots/<commit>`. */
export const snapshotPath = (c: RepoCache, commit: string): string =>
  join(c.folder, 'snapshots', commit);
/** `snapshots/<commit>/<file>`. */
export const pointerPath = (c: RepoCache, commit: string, file: string): string =>
  join(snapshotPath(c, commit), ...file.split('/'));
/** `refs/<revision>`. */
export const refPath = (c: RepoCache, revision: string): string =>
  join(c.folder, 'refs', ...revision.split('/'));
/** The lock file of one blob: `.locks/models--ORG--NAME/<etag>.poad-lock`. */
export const lockPath = (c: RepoCache, etag: string): string =>
  join(
    c.cacheDir,
    '.locks',
    getRepoFolderName({ type: 'model', name: c.repo }),
    `${etag}.poad-lock`,
  );

/** True when `path` exists and is (or links to) a regular file. */
export async function fileExists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The commit a revision names: itself when it is a commit hash, else what `refs/<revision>` holds. */
export async function readRef(c: RepoCache, revision: string): Promise<string | undefined> {
  if (isCommitHash(revision)) return revision;
  try {
    const commit = (await readFile(refPath(c, revision), 'utf8')).trim();
    return isCommitHash(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}

/** Record that `revision` points at `commit` (nothing to write when the revision is the commit). */
export async function writeRef(c: RepoCache, revision: string, commit: string): Promise<void> {
  if (revision === commit) return;
  const path = refPath(c, revision);
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, commit);
}

let linkCounter = 0;

/**
 * Point `snapshots/<commit>/<file>` at `blobs/<etag>` with a relative symlink, replacing whatever
 * was there in one rename (readers never see a missing pointer). Where symlinks are refused
 * (Windows without developer mode) the blob is copied instead, as Python does.
 */
export async function linkPointer(
  c: RepoCache,
  commit: string,
  file: string,
  etag: string,
): Promise<string> {
  const pointer = pointerPath(c, commit, file);
  const blob = blobPath(c, etag);
  await mkdir(dirname(pointer), { recursive: true });
  linkCounter = (linkCounter + 1) % 1_000_000;
  const tmp = `${pointer}.tmp-${process.pid}-${linkCounter}`;
  try {
    await symlink(relative(dirname(pointer), blob), tmp);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
    await copyFile(blob, tmp);
  }
  try {
    await rename(tmp, pointer);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  return pointer;
}
