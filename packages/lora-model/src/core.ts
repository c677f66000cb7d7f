// What `@poad/lora-model` offers in every runtime (no Node built-ins): the model, LoRA, the
// value head, scoring and generation, and model files as bytes in memory. `index.ts` (Node) adds
// model folders on disk, `browser.ts` (the `browser` export condition) model folders over HTTP.
// Backends and kernels are `@poad/tfjs-kernels`.

// The model
export type { AdapterOption, CausalLMOptions, ModelSource } from './causal-lm.js';
export { CausalLM, createCausalLM } from './causal-lm.js';
// Configuration and errors
export type { HFModelConfig, ModelConfig } from './config.js';
export { ModelConfigError, ModelInputError } from './errors.js';
// The critic's inputs
export type { BaseFeatures, ValueFeatures } from './features.js';
export { featureRows, featureSize, valuesOf } from './features.js';
// Generation
export type { GenerateBatchOptions, GenerateOptions, GenerateResult } from './generate.js';
export { generate, generateBatch } from './generate.js';
// LoRA
export type { LoraConfig } from './lora.js';
export { DEFAULT_LORA_CONFIG, LoraAdapter } from './lora.js';
// Model files in memory
export type { ModelFiles, SaveAdapterOptions } from './model-files.js';
export {
  adapterFiles,
  causalLMFromFiles,
  llamaConfigOf,
  VALUE_HEAD_FILE,
  valueHeadFile,
} from './model-files.js';
export type { SamplingOptions } from './sampling.js';
// Scoring: what a trainer calls
export type { ScoreOptions } from './scoring.js';
export { candidateTokenLogProbs, scoreContinuations } from './scoring.js';
export type { TokenStats, TokenStatsOptions } from './token-stats.js';
export { tokenStats } from './token-stats.js';
// The critic
export type { ValueHeadOptions } from './value-head.js';
export { ValueHead } from './value-head.js';
export type { WeightDtype } from './weights.js';
export { WEIGHT_DTYPES, WeightShapeError } from './weights.js';
