// What `@poad/lora-model` offers in every runtime (no Node built-ins): the model, LoRA, the
// value head, scoring and sampling, kernels, and model files as bytes in memory. `index.ts` (Node)
// and `browser.ts` (the `browser` export condition) add backends and file access of their own.

// Kernels
export type { BatchMatMulRoute } from './batch-matmul.js';
export { batchMatMul, depthwiseBatchMatMul, setBatchMatMulRoute } from './batch-matmul.js';
// The model
export type { AdapterOption, CausalLMOptions } from './causal-lm.js';
export { CausalLM, causalLMFromTensors, createCausalLM } from './causal-lm.js';
// Configuration and errors
export type { HFModelConfig, ModelConfig } from './config.js';
export { resolveModelConfig, toHFConfig } from './config.js';
export type { DecoderInput, DecoderOutput, KVCache, KVEntry } from './decoder.js';
export { decoderForward, lmHead } from './decoder.js';
export type { WebGpuMissing } from './errors.js';
export {
  BackendUnavailableError,
  GpuDeviceError,
  ModelConfigError,
  ModelInputError,
  WebGpuUnavailableError,
} from './errors.js';
export type { BaseFeatures } from './features.js';
export { baseFeatures, promptFeatures, promptValues, tokenValues, valuesOf } from './features.js';
export type { FusedOps } from './fused.js';
export { activeFusedOps, setFusedOps } from './fused.js';
export type { GenerateBatchOptions, GenerateOptions, GenerateResult } from './generate.js';
export { generate, generateBatch } from './generate.js';
export { reduceTo, registerGradients } from './gradients.js';
export { registerSegmentSumKernel } from './kernels.js';
export { rmsNorm, swiGlu } from './layers.js';
export type { LinearWeight } from './linear.js';
export {
  frozenMatMul,
  frozenWeight,
  linear,
  trainableMatMul,
  transposedProductsAreFast,
} from './linear.js';
export type { LogProbStats } from './log-prob-stats.js';
export { logProbStats, targetLogProbs } from './log-prob-stats.js';
// LoRA and the critic
export type { LoraConfig, LoraPair } from './lora.js';
export { DEFAULT_LORA_CONFIG, LoraAdapter, resolveLoraConfig } from './lora.js';
// Model files in memory
export type { ModelFiles, SaveAdapterOptions } from './model-files.js';
export {
  adapterFiles,
  causalLMFromFiles,
  llamaConfigOf,
  peftAdapterOf,
  VALUE_HEAD_FILE,
  valueHeadFile,
} from './model-files.js';
export { SeededRng } from './rng.js';
export type { SamplingOptions } from './sampling.js';
export { logSoftmaxAt, sampleToken } from './sampling.js';
// What the trainer calls
export type { ScoreOptions } from './scoring.js';
export { candidateTokenLogProbs, scoreContinuations } from './scoring.js';
export type { TokenStats, TokenStatsOptions } from './token-stats.js';
export { scoreTokens, tokenStats } from './token-stats.js';
export type { ValueHeadOptions } from './value-head.js';
export { ValueHead, valueHeadKey } from './value-head.js';
export type { GpuAdapterReport } from './webgpu/adapter.js';
export { describeAdapter } from './webgpu/adapter.js';
export { webGpuFusedOps } from './webgpu/fused-ops.js';
export type { HostTensor, LayerWeights, ModelWeights, ModuleName } from './weights.js';
export {
  buildWeights,
  expectedTensorShapes,
  exportWeights,
  MODULE_NAMES,
  modulePath,
  randomHostTensors,
  readFloats,
  WeightShapeError,
} from './weights.js';
