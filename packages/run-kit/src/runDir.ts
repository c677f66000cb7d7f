import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { writeJsonAtomicSync } from './files.js';

/** A timestamped name like `virtualhome-food-preparation-poad-s1-20261121-065501`. */
export function runName(parts: readonly (string | number)[], date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
  return [...parts.map((x) => String(x).replace(/[^A-Za-z0-9._-]+/g, '-')), stamp].join('-');
}

/** Options of {@link createRunDir}. */
export interface CreateRunDirOptions {
  /**
   * The name was made up (e.g. by {@link runName}), not chosen by the user: if a directory of that
   * name exists (two runs started within the same second), take the first free `name-2`,
   * `name-3`, … instead of failing. A name the user chose is never changed.
   */
  readonly unique?: boolean;
}

/**
 * Creates a fresh run directory under `root` and writes `config.json` (the resolved options) and
 * `environment.json` (backend, package versions, Node version, platform, command line). The
 * directory is claimed atomically (`mkdir` without `recursive`), so two processes never share one.
 */
export function createRunDir(
  root: string,
  name: string,
  config: Record<string, unknown>,
  environment: Record<string, unknown>,
  options: CreateRunDirOptions = {},
): string {
  const base = resolve(join(root, name));
  mkdirSync(dirname(base), { recursive: true });
  let dir = base;
  for (let n = 2; ; n++) {
    try {
      mkdirSync(dir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (!options.unique)
        throw new Error(
          `run directory ${dir} already exists; pick another --run-name or use --resume ${dir}`,
        );
      dir = `${base}-${n}`;
    }
  }
  writeJsonAtomicSync(join(dir, 'config.json'), config);
  writeJsonAtomicSync(join(dir, 'environment.json'), {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    argv: process.argv.slice(2),
    startedAt: new Date().toISOString(),
    ...environment,
  });
  return dir;
}
