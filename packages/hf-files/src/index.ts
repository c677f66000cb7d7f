/**
 * File layer of `@poad/lora-model`: safetensors reading and writing, Hugging Face checkpoint
 * folders, PEFT LoRA adapters, tokenizers, and atomic writes.
 */

export { writeFileAtomic } from './atomic.js';
export type { Checkpoint, ReadCheckpointOptions, WriteCheckpointOptions } from './checkpoint.js';
export { CHECKPOINT_FILES, readCheckpoint, writeCheckpoint } from './checkpoint.js';
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
export type { PeftAdapter } from './peft.js';
export { readPeftAdapter, validatePeftTensors, writePeftAdapter } from './peft.js';
export type { PeftAdapterConfig } from './peft-config.js';
export { ADAPTER_FILES, loraScaling, parsePeftAdapterConfig } from './peft-config.js';
export type { LoraModule, PeftKeyParts } from './peft-keys.js';
export { LORA_MODULES, loraModuleShape, parsePeftKey, peftKey } from './peft-keys.js';
export {
  readSafetensorsFile,
  readSafetensorsHeader,
  writeSafetensorsFile,
} from './safetensors-file.js';
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
export { loadTokenizer, withByteLevelDecoder } from './tokenizer.js';
export type { TrainTokenizerOptions } from './tokenizer-train.js';
export { trainByteLevelTokenizer } from './tokenizer-train.js';
export { checkTokenizerVocab, tokenizerIdCount } from './tokenizer-vocab.js';
