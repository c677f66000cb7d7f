/**
 * `@poad/lora-model`: a LLaMA-family causal language model in float32 TensorFlow.js with LoRA,
 * a value head, Hugging Face / PEFT checkpoint files and prefix-shared action scoring.
 *
 * Nothing here initialises a TF.js backend on import: call {@link initBackend} (or set one up
 * yourself) first.
 */

// Backends (Node: tfjs-node, Dawn's WebGPU, wasm with @poad/tfjs-native, cpu)
export type { BackendChoice, BackendInfo, BackendOptions } from './backend.js';
export { initBackend, releaseBackend } from './backend.js';
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
