import { readFile, stat } from 'node:fs/promises';
import { CheckpointError, type CheckpointErrorCode } from './errors.js';
import { fsError } from './safetensors-file.js';

/** Read a UTF-8 text file, turning a missing file into a {@link CheckpointError}. */
export async function readTextFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw fsError(e, path, what);
  }
}

/** Read and parse a JSON file; unparsable text raises a {@link CheckpointError} with `code`. */
export async function readJsonFile(
  path: string,
  what: string,
  code: CheckpointErrorCode = 'invalid_config',
): Promise<unknown> {
  const text = await readTextFile(path, what);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new CheckpointError(code, path, `${what} is not valid JSON`, undefined, { cause });
  }
}

/** True when `path` names an existing file. */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
