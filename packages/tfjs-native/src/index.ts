export type { NativeBuildInfo, NativeThreadOptions } from './addon.js';
export {
  getNativeInfo,
  isNativeAvailable,
  nativeAddonPath,
  nativeUnavailableReason,
  setNativeAddonPath,
  setNativeThreads,
} from './addon.js';
export type { MatMulPlan } from './matmul-plan.js';
export { MatMulShapeError, planMatMul } from './matmul-plan.js';
export type { AttentionOptions } from './ops/attention.js';
export { attention } from './ops/attention.js';
export type { LogProbStats } from './ops/log-prob-stats.js';
export { logProbStats } from './ops/log-prob-stats.js';
export { rmsNorm } from './ops/rms-norm.js';
export { rotaryEmbedding } from './ops/rotary.js';
export { swiGlu } from './ops/swi-glu.js';
export type { NativeKernelsOptions, NativeKernelsResult } from './register.js';
export {
  FUSED_KERNEL_NAMES,
  NATIVE_KERNEL_NAMES,
  nativeKernelsRegistered,
  registerNativeKernels,
  unregisterNativeKernels,
} from './register.js';
