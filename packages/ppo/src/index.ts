// @poad/ppo: POAD, NTPO, ARCHER and TWOSOME trainers over token trajectories.

export type { AdamOptions, AdamState, AdamWConfig } from './adam.js';
export { Adam, adamFromConfig } from './adam.js';
export { NORMALISATION_EPS, normaliseAdvantages } from './advantage-normalisation.js';
export type { Advantages, RolloutSegment, RolloutValues } from './advantages.js';
export { computeAdvantages, rolloutSegments } from './advantages.js';
export * from './checkpoint.js';
export { checkpointFromJson, checkpointToJson } from './checkpoint-json.js';
export * from './collect-rollout.js';
// Configuration
export * from './config.js';
export type { UpdateDiagnostics, UpdateStats } from './diagnostics.js';
export { explainedVariance } from './diagnostics.js';
export * from './errors.js';
export { clipGradNorm, gradNorm } from './grad-clip.js';
export { allowedTokenSets, nextTokenSets, restrictedLogProbs } from './label-tokens.js';
export * from './losses.js';
export type { MomentOptimizerOptions, OptimizerState } from './moment-optimizer.js';
export { MomentOptimizer } from './moment-optimizer.js';
export type { GradClip } from './multi-tensor.js';
export {
  assignFlat,
  deviceGate,
  MULTI_TENSOR_KERNELS,
  multiTensorKernels,
  packFlat,
  unpackFlat,
} from './multi-tensor.js';
export { NonFiniteStreak } from './non-finite-streak.js';
export { toPadded } from './padding.js';
export * from './policy.js';
export type { PpoUpdateArgs } from './ppo-update.js';
export { ppoUpdate } from './ppo-update.js';
export type { RngState } from './rng.js';
export { SeededRng } from './rng.js';
export type { StepRecord } from './rollout-buffer.js';
// Building blocks
export { RolloutBuffer, RolloutBuilder } from './rollout-buffer.js';
export type { SelectedActions, SelectOptions } from './select-actions.js';
export { selectActions } from './select-actions.js';
export { TargetCritic } from './target-critic.js';
export { padTokenRows, tokenBatchOf } from './token-batch.js';
export type { IterationReport, PpoTrainerOptions } from './trainer.js';
// The loop
export { PpoTrainer } from './trainer.js';
export * from './trainer-base.js';
export type { CandidateDistribution } from './twosome-sampler.js';
export { argmax, candidateDistribution, candidateNormaliser } from './twosome-sampler.js';
export type { VecEnvLike } from './vec-env-like.js';
