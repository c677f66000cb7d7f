/**
 * File layer of `@poad/lora-model`: safetensors reading and writing, Hugging Face checkpoint
 * folders, PEFT LoRA adapters, tokenizers, and atomic writes.
 */

// Files and folders, and the native tokenizer.
export { writeFileAtomic } from './atomic.js';
// Everything that runs without Node built-ins (also the package's `browser` entry).
export * from './browser.js';
export type { Checkpoint, ReadCheckpointOptions, WriteCheckpointOptions } from './checkpoint.js';
export { CHECKPOINT_FILES, readCheckpoint, writeCheckpoint } from './checkpoint.js';
export type { PeftAdapter } from './peft.js';
export { readPeftAdapter, writePeftAdapter } from './peft.js';
export {
  readSafetensorsFile,
  readSafetensorsHeader,
  writeSafetensorsFile,
} from './safetensors-file.js';
export { loadTokenizer, withByteLevelDecoder } from './tokenizer.js';
export type { TrainTokenizerOptions } from './tokenizer-train.js';
export { trainByteLevelTokenizer } from './tokenizer-train.js';
