/**
 * `@poad/lora-model`: a LLaMA-family causal language model in float32 TensorFlow.js with LoRA,
 * a value head, Hugging Face / PEFT checkpoint files and prefix-shared action scoring.
 *
 * Nothing here initialises a TF.js backend on import: call `initBackend` of
 * `@poad/tfjs-kernels` (or set one up yourself) first.
 */

// Model folders on disk
export type { LoadCausalLMOptions, SaveCausalLMOptions } from './checkpoint.js';
export {
  loadAdapter,
  loadCausalLM,
  loadValueHead,
  readAdapter,
  saveAdapter,
  saveCausalLM,
  saveValueHead,
} from './checkpoint.js';
export * from './core.js';
