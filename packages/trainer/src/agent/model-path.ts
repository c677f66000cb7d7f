/**
 * What a `model` option names: the embedded models, a Hub id or a folder; the ids that end a
 * generated action for the embedded models; and, without loading anything, whether a model has a
 * chat template (how `auto` settles for comparing runs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  defaultCodeModelPath,
  defaultModelPath,
  END_OF_TEXT_ID,
  informativePriorModelPath,
} from '@poad/default-model';
import { hubEnvironment, isCommitHash, parseModelId, repoCache } from '@poad/hf-files';

/** The `model` option's value that names the embedded default model (`@poad/default-model`). */
export const DEFAULT_MODEL_OPTION = 'default';

/** The `model` option's value that names the embedded code model of DataSciCoding. */
export const DEFAULT_CODE_MODEL_OPTION = 'default-code';

/** The `model` option's value that names the informative-prior variant of the default model. */
export const INFORMATIVE_PRIOR_MODEL_OPTION = 'informative-prior';

/**
 * Whether `model` (a `model` option, after {@link resolveModelPath}) names a model on the Hugging
 * Face Hub, `ORG/NAME` or `ORG/NAME@REVISION`, rather than a folder.
 */
export function isHubModelId(model: string): boolean {
  return model !== '' && !existsSync(model) && parseModelId(model).kind === 'hub';
}

/**
 * What a `model` option points to: `'default'` is the folder of the embedded default model shipped
 * by `@poad/default-model`, `'default-code'` its code model (DataSciCoding), `'informative-prior'`
 * its informative-prior variant; `ORG/NAME` or `ORG/NAME@REVISION` that is not a folder is a model
 * on the Hugging Face Hub and comes back as it is (`loadCausalLM` and `createLmAgent` download
 * it); anything else is a Hugging Face model folder, relative to the working directory, made
 * absolute. Runs recorded before the default model became a package stored `'models/default'`;
 * where no such folder exists that value also means the embedded model.
 */
export function resolveModelPath(model: string): string {
  if (model === DEFAULT_MODEL_OPTION) return defaultModelPath;
  if (model === DEFAULT_CODE_MODEL_OPTION) return defaultCodeModelPath;
  if (model === INFORMATIVE_PRIOR_MODEL_OPTION) return informativePriorModelPath;
  if (model === 'models/default' && !existsSync(model)) return defaultModelPath;
  if (isHubModelId(model)) return model;
  // Text that tries to be a Hub id but is not a valid one (and no folder): kept as written, so
  // that loading it says what a Hub id looks like instead of naming a missing folder.
  if (!existsSync(model) && /^[^/\\.~][^/\\]*\/[^/\\]+$/.test(model.split('@')[0]!)) return model;
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

/**
 * Whether a model folder has a chat template (`chat_template.jinja`, or `chat_template` in
 * `tokenizer_config.json`), read synchronously; false when the folder has neither or cannot be
 * read.
 */
export function hasChatTemplateSync(folder: string): boolean {
  if (existsSync(join(folder, 'chat_template.jinja'))) return true;
  try {
    const config = JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')) as {
      chat_template?: unknown;
    };
    return config.chat_template != null;
  } catch {
    return false;
  }
}

/**
 * The snapshot folder of a Hub id in the Hub cache (`HF_HUB_CACHE`, `HF_HOME`, …): the commit
 * the id names, or the one its branch or tag pointed at when last downloaded; undefined when the
 * cache has no such reference.
 */
function cachedSnapshotSync(id: string): string | undefined {
  const parsed = parseModelId(id);
  if (parsed.kind !== 'hub') return undefined;
  const cache = repoCache(hubEnvironment().cacheDir, parsed.repo);
  const revision = parsed.revision ?? 'main';
  let commit = revision;
  if (!isCommitHash(revision)) {
    try {
      commit = readFileSync(join(cache.folder, 'refs', ...revision.split('/')), 'utf8').trim();
    } catch {
      return undefined;
    }
  }
  const folder = join(cache.folder, 'snapshots', commit);
  return isCommitHash(commit) && existsSync(folder) ? folder : undefined;
}

/**
 * The prompt format a run's options settle on without loading the model, for comparing runs
 * (`runSettings`): `auto` becomes `plain` or `chat` for a model on disk (an embedded model, a
 * folder, or a Hub id the Hub cache holds), and stays `auto` for a Hub id not downloaded yet.
 */
export function settledPromptFormat(model: string, format: string): string {
  if (format !== 'auto') return format;
  const path = resolveModelPath(model);
  const folder = isHubModelId(path) ? cachedSnapshotSync(path) : path;
  if (folder === undefined) return format;
  return hasChatTemplateSync(folder) ? 'chat' : 'plain';
}
