/**
 * The parts of `@poad/hf-files` that need no Node built-ins: safetensors parsing and writing in
 * memory, Hugging Face config parsing, PEFT naming, and a byte-level BPE tokenizer in plain
 * TypeScript. Bundlers that resolve the `browser` export condition get this entry; Node gets
 * `index.ts`, which adds files, folders and the native tokenizer.
 */

export type { TokenizerFromJsonOptions } from './bpe-tokenizer.js';
export { tokenizerFromJson } from './bpe-tokenizer.js';
export type { DType, StoreDType } from './dtype.js';
export { DTYPE_BYTES, DTYPES, isDType } from './dtype.js';
export type { CheckpointErrorCode } from './errors.js';
export { CheckpointError, isCheckpointError } from './errors.js';
export {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from './half.js';
export type { Llama3RopeScaling, LlamaConfig } from './llama-config.js';
export {
  effectiveSlidingWindow,
  hasQkNorm,
  llamaBiasLayout,
  parseLlamaConfig,
  parseRopeScaling,
  SUPPORTED_MODEL_TYPES,
  SUPPORTED_ROPE_SCALING,
} from './llama-config.js';
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
