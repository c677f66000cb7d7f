import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { OptionError, type OptionsSchema, type ParsedArgs, parseArgs } from '@poad/config';
import { parse as parseYaml } from 'yaml';

/**
 * Writes a file so that readers only ever see the old or the complete new content: the bytes go
 * to a temporary file in the same directory, are flushed to disk, and then renamed over `path`.
 * If any part fails (e.g. ENOSPC, EACCES) the temporary file is removed and the error rethrown;
 * `path` keeps its old content.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  writeFileAtomicWith(path, data);
}

/** {@link writeFileAtomicSync} with a hook run after the temporary file is complete, before the rename. */
export function writeFileAtomicWith(
  path: string,
  data: string | Uint8Array,
  beforeRename?: (tmp: string) => void,
): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    beforeRename?.(tmp);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** `writeFileAtomicSync` of pretty-printed JSON. */
export function writeJsonAtomicSync(path: string, value: unknown): void {
  writeFileAtomicSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * `parseArgs` with `--config FILE` read: the file's values (JSON or YAML), then the command line,
 * which wins. Every command line with a schema should parse through it, since `formatHelp` offers
 * `--config` to all of them.
 */
export async function parseArgsWithConfig(
  argv: readonly string[],
  schema: OptionsSchema,
): Promise<ParsedArgs> {
  return parseArgs(argv, schema, readConfigFile);
}

/** Reads a JSON or YAML options file (by extension; `.yml`/`.yaml` are YAML). */
export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new OptionError(`--config ${path}: cannot read the file (check the path)`);
  }
  return parseConfigText(text, path);
}

/** {@link readConfigFile}, for callers that await it. */
export async function loadConfigFile(path: string): Promise<Record<string, unknown>> {
  return readConfigFile(path);
}

export function parseConfigText(text: string, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw new OptionError(
      `--config ${path}: not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'} (${(err as Error).message.split('\n')[0]})`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new OptionError(`--config ${path}: must hold an object mapping option names to values`);
  }
  return value as Record<string, unknown>;
}
