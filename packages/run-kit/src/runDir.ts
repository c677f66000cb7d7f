import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJsonAtomicSync } from './files.js';

/** A timestamped name like `virtualhome-food-preparation-poad-s1-20261121-065501`. */
export function runName(parts: readonly (string | number)[], date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
  return [...parts.map((x) => String(x).replace(/[^A-Za-z0-9._-]+/g, '-')), stamp].join('-');
}

/**
 * Creates a fresh run directory under `root` and writes `config.json` (the resolved options) and
 * `environment.json` (backend, package versions, Node version, platform, command line).
 */
export function createRunDir(
  root: string,
  name: string,
  config: Record<string, unknown>,
  environment: Record<string, unknown>,
): string {
  const dir = resolve(join(root, name));
  if (existsSync(dir))
    throw new Error(
      `run directory ${dir} already exists; pick another --run-name or use --resume ${dir}`,
    );
  mkdirSync(dir, { recursive: true });
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
