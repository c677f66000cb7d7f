import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultCodeModelPath, defaultModelPath } from '@poad/default-model';

/** The `model` option's value that names the embedded default model (`@poad/default-model`). */
export const DEFAULT_MODEL_OPTION = 'default';

/** The `model` option's value that names the embedded code model of DataSciCoding. */
export const DEFAULT_CODE_MODEL_OPTION = 'default-code';

/**
 * The folder a `model` option points to: `'default'` is the embedded default model shipped by
 * `@poad/default-model`, `'default-code'` its code model (DataSciCoding); anything else is a Hugging Face model folder, relative to the working
 * directory. Runs recorded before the default model became a package stored
 * `'models/default'`; where no such folder exists that value also means the embedded model.
 */
export function resolveModelPath(model: string): string {
  if (model === DEFAULT_MODEL_OPTION) return defaultModelPath;
  if (model === DEFAULT_CODE_MODEL_OPTION) return defaultCodeModelPath;
  if (model === 'models/default' && !existsSync(model)) return defaultModelPath;
  return resolve(model);
}
