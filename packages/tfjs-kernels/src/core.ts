// What `@poad/tfjs-kernels` offers in every runtime (no Node built-ins): fused ops and the
// kernels and gradients behind them, batched products, the backend errors and the WGSL ops.
// `index.ts` (Node) and `browser.ts` (the `browser` export condition) add `initBackend` and
// `releaseBackend` of their own.

// Batched matrix products
export type { BatchMatMulRoute } from './batch-matmul.js';
export { batchMatMul, depthwiseBatchMatMul, setBatchMatMulRoute } from './batch-matmul.js';
// Errors of the backends
export type { WebGpuMissing } from './errors.js';
export { BackendUnavailableError, GpuDeviceError, WebGpuUnavailableError } from './errors.js';
// Fused ops: the provider installed per backend
export type { FusedOps } from './fused.js';
export { activeFusedOps, setFusedOps } from './fused.js';
// Gradients and kernels registered on TF.js
export { registerGradients } from './gradients.js';
// Log-probabilities and entropies of targets
export type { LogProbStats } from './log-prob-stats.js';
export { logProbStats, targetLogProbs } from './log-prob-stats.js';
// Frozen weights packed two 16-bit values per int32 (webgpu)
export * from './packed.js';
// Frozen float32 products: TF.js's matmul or the tiled program, per shape as measured
export * from './products.js';
// Reading many tensors at once
export { readTensors } from './read-tensors.js';
export { registerSegmentSumKernel } from './segment-sum.js';
export type { GpuAdapterReport } from './webgpu/adapter.js';
// WebGPU
export type { GpuCounters, GpuWork } from './webgpu/counters.js';
export {
  gpuCounters,
  gpuCountersSince,
  gpuPhase,
  setGpuPhase,
  withGpuPhase,
} from './webgpu/counters.js';
export { webGpuFusedOps } from './webgpu/fused-ops.js';
export { MULTI_TENSOR_KERNELS } from './webgpu/multi-tensor.js';
export { PPO_LOSS_KERNELS } from './webgpu/ppo-loss.js';
export { setSubgroupUse, subgroupLayoutSize, subgroupSize } from './webgpu/subgroups.js';
