import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { HubError } from './errors.js';
import { hubIdProblem, type ModelId, parseModelId } from './hub-id.js';

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Classify a model reference as {@link parseModelId} does, then look at the disk: a folder that
 * exists under the reference's relative path is a `path` even when the text is also a valid Hub
 * id (as Python's `from_pretrained` does), and paths come back absolute. A reference that tries to
 * be a Hub id (one `/`, no path syntax) but is not valid, and is no folder either, is refused with
 * a `HubError` (`invalid_model_id`) that explains the form.
 */
export async function resolveModelId(
  spec: string,
  options: { cwd?: string } = {},
): Promise<ModelId> {
  const parsed = parseModelId(spec);
  const cwd = options.cwd ?? process.cwd();
  if (parsed.kind === 'name') return parsed;
  const local = resolve(cwd, spec);
  if (parsed.kind === 'hub') {
    return (await isDir(local)) ? { kind: 'path', path: local, spec } : parsed;
  }
  if (!(await isDir(local))) {
    const problem = hubIdProblem(spec);
    if (problem !== undefined) {
      throw new HubError(
        'invalid_model_id',
        spec,
        `is neither an existing folder nor a Hub model id: ${problem}; write ORG/NAME or ORG/NAME@REVISION, or the path of a model folder`,
      );
    }
  }
  return { kind: 'path', path: local, spec };
}
