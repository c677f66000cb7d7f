import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultModelPath } from '@poad/default-model';

/** The `model` option's value that names the embedded default model (`@poad/default-model`). */
export const DEFAULT_MODEL_OPTION = 'default';

/**
 * The folder a `model` option points to: `'default'` is the embedded default model shipped by
 * `@poad/default-model`; anything else is a Hugging Face model folder, relative to the working
 * directory. Runs recorded before the default model became a package stored
 * `'models/default'`; where no such folder exists that value also means the embedded model.
 */
export function resolveModelPath(model: string): string {
  if (model === DEFAULT_MODEL_OPTION) return defaultModelPath;
  if (model === 'models/default' && !existsSync(model)) return defaultModelPath;
  return resolve(model);
}
