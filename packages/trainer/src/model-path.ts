import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  defaultCodeModelPath,
  defaultModelPath,
  END_OF_TEXT_ID,
  informativePriorModelPath,
} from '@poad/default-model';

/** The `model` option's value that names the embedded default model (`@poad/default-model`). */
export const DEFAULT_MODEL_OPTION = 'default';

/** The `model` option's value that names the embedded code model of DataSciCoding. */
export const DEFAULT_CODE_MODEL_OPTION = 'default-code';

/** The `model` option's value that names the informative-prior variant of the default model. */
export const INFORMATIVE_PRIOR_MODEL_OPTION = 'informative-prior';

/**
 * The folder a `model` option points to: `'default'` is the embedded default model shipped by
 * `@poad/default-model`, `'default-code'` its code model (DataSciCoding), `'informative-prior'` its informative-prior variant; anything else is a Hugging Face model folder, relative to the working
 * directory. Runs recorded before the default model became a package stored
 * `'models/default'`; where no such folder exists that value also means the embedded model.
 */
export function resolveModelPath(model: string): string {
  if (model === DEFAULT_MODEL_OPTION) return defaultModelPath;
  if (model === DEFAULT_CODE_MODEL_OPTION) return defaultCodeModelPath;
  if (model === INFORMATIVE_PRIOR_MODEL_OPTION) return informativePriorModelPath;
  if (model === 'models/default' && !existsSync(model)) return defaultModelPath;
  return resolve(model);
}

/**
 * The ids that end a generated action for a `model` option: for the embedded models, whose
 * tokenizers declare no special tokens, their end-of-text id; undefined otherwise (the policy then
 * stops at the tokenizer's EOS).
 */
export function embeddedStopTokenIds(model: string): number[] | undefined {
  const path = resolveModelPath(model);
  return [defaultModelPath, defaultCodeModelPath, informativePriorModelPath].includes(path)
    ? [END_OF_TEXT_ID]
    : undefined;
}
