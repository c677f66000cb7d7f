/**
 * File layer of `@poad/lora-model`: safetensors reading and writing, Hugging Face checkpoint
 * folders, PEFT LoRA adapters, tokenizers, atomic writes, and models downloaded from the
 * Hugging Face Hub into the cache shared with Python.
 */

// Files and folders, and the native tokenizer.
export { writeFileAtomic } from './atomic.js';
// Everything that runs without Node built-ins (also the package's `browser` entry).
export * from './browser.js';
export { readChatTemplate } from './chat-template-file.js';
export type { Checkpoint, ReadCheckpointOptions, WriteCheckpointOptions } from './checkpoint.js';
export { CHECKPOINT_FILES, readCheckpoint, writeCheckpoint } from './checkpoint.js';
export type { RepoCache } from './hub-cache.js';
export { repoCache } from './hub-cache.js';
export type { ModelSnapshot, SnapshotDownloadOptions } from './hub-download.js';
export { snapshotDownload } from './hub-download.js';
export type { HubEnvironment } from './hub-env.js';
export { DEFAULT_HUB_ENDPOINT, hubEnvironment } from './hub-env.js';
export { resolveModelId } from './model-id.js';
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
