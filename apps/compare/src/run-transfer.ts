// A finished run as a worker sends it back over the queue: the files `npm run archive` keeps
// (everything but checkpoints/ and run.lock), by path relative to the run directory, base64.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { SKIP } from './archive.js';

/** A run's archive: file path (with `/`) → contents, base64. */
export type RunFiles = Record<string, string>;

/** A result from the queue that is not a run's archive. */
export class RunFilesError extends Error {
  override readonly name = 'RunFilesError';
}

/** The archive of the finished run in `runDir`. */
export function packRun(runDir: string): RunFiles {
  const files: RunFiles = {};
  const walk = (rel: string) => {
    const path = join(runDir, rel);
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) walk(rel ? `${rel}/${name}` : name);
    } else files[rel] = readFileSync(path).toString('base64');
  };
  for (const name of readdirSync(runDir).sort()) if (!SKIP.has(name)) walk(name);
  return files;
}

/**
 * Writes the archive `files` of run `name` as `runDir` (through a temporary folder beside it, so
 * that an interrupted write leaves nothing that looks finished), replacing what was there.
 * @throws RunFilesError when `files` is not an archive or names a path outside the run.
 */
export function unpackRun(files: unknown, runDir: string, name: string): void {
  if (!files || typeof files !== 'object' || Array.isArray(files))
    throw new RunFilesError(`run ${name}: the worker sent no files back`);
  const entries = Object.entries(files as Record<string, unknown>);
  for (const [rel, data] of entries) {
    const clean = normalize(rel);
    if (
      isAbsolute(rel) ||
      clean.startsWith(`..${sep}`) ||
      clean === '..' ||
      typeof data !== 'string'
    )
      throw new RunFilesError(
        `run ${name}: the worker sent ${JSON.stringify(rel)}, not a file of a run`,
      );
  }
  if (!entries.some(([rel]) => rel === 'eval.json'))
    throw new RunFilesError(
      `run ${name}: the files the worker sent have no eval.json (not a finished run)`,
    );
  const tmp = `${runDir}.queue-tmp`;
  rmSync(tmp, { recursive: true, force: true });
  for (const [rel, data] of entries) {
    const path = join(tmp, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, Buffer.from(data as string, 'base64'));
  }
  if (existsSync(runDir)) rmSync(runDir, { recursive: true, force: true });
  renameSync(tmp, runDir);
}
