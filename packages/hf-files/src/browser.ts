/**
 * The parts of `@poad/hf-files` that need no Node built-ins: safetensors parsing and writing in
 * memory, Hugging Face config parsing, PEFT naming, a byte-level BPE tokenizer in plain
 * TypeScript, chat templates, and the parsing of Hub model ids. Bundlers that resolve the `browser` export condition get this entry; Node gets
 * `index.ts`, which adds files, folders and the native tokenizer.
 */

export type { TokenizerFromJsonOptions } from './bpe-tokenizer.js';
export { tokenizerFromJson } from './bpe-tokenizer.js';
export * from './chat-template.js';
export type { DType, StoreDType } from './dtype.js';
export { DTYPE_BYTES, DTYPES, isDType } from './dtype.js';
export type { CheckpointErrorCode, HubErrorDetails } from './errors.js';
export { CheckpointError, HubError, isCheckpointError, isHubError } from './errors.js';
export * from './half.js';
export type { ModelId } from './hub-id.js';
export { isCommitHash, isHubRepoId, isValidRevision, parseModelId } from './hub-id.js';
export type { ModelFilePlan, WeightsPlan } from './hub-plan.js';
export {
  HUB_CONFIG_FILE,
  HUB_GENERATION_CONFIG_FILE,
  HUB_TOKENIZER_FILES,
  HUB_WEIGHTS_FILE,
  HUB_WEIGHTS_INDEX_FILE,
  planModelFiles,
  shardsOfIndex,
} from './hub-plan.js';
export type { DownloadProgress } from './hub-progress.js';
export { formatBytes } from './hub-progress.js';
export * from './llama-config.js';
export type { ExpectedTensor } from './llama-tensors.js';
export {
  expectedLlamaTensorNames,
  expectedLlamaTensors,
  validateLlamaTensors,
} from './llama-tensors.js';
export type { PeftAdapterConfig } from './peft-config.js';
export { ADAPTER_FILES, loraScaling, parsePeftAdapterConfig } from './peft-config.js';
export { peftAdapterFiles, validatePeftTensors } from './peft-files.js';
export type { LoraModule, PeftKeyParts } from './peft-keys.js';
export { LORA_MODULES, loraModuleShape, parsePeftKey, peftKey } from './peft-keys.js';
export type { SafetensorsEntry, SafetensorsHeader } from './safetensors-header.js';
export { DEFAULT_MAX_HEADER_BYTES } from './safetensors-header.js';
export type {
  NamedTensor,
  ParseSafetensorsOptions,
  SafetensorsContents,
} from './safetensors-read.js';
export { decodeTensorData, parseSafetensors, parseSafetensorsHeader } from './safetensors-read.js';
export type { TensorInput, TensorInputs } from './safetensors-write.js';
export { serializeSafetensors } from './safetensors-write.js';
export type { SpecialTokenOptions, TextTokenizer } from './tokenizer.js';
export { checkTokenizerVocab, tokenizerIdCount } from './tokenizer-vocab.js';
