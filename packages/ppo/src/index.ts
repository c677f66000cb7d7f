// @poad/ppo: POAD, NTPO, ARCHER and TWOSOME trainers over token trajectories.

export type { AdamOptions, AdamState, AdamWConfig } from './adam.js';
export { Adam, adamFromConfig } from './adam.js';
export { NORMALISATION_EPS, normaliseAdvantages } from './advantage-normalisation.js';
export type { Advantages, RolloutSegment, RolloutValues } from './advantages.js';
export { computeAdvantages, rolloutSegments } from './advantages.js';
export type { TensorData, TrainerCheckpoint, TrainerCounters } from './checkpoint.js';
export {
  assertFiniteCheckpoint,
  checkVariables,
  readVariables,
  writeVariables,
} from './checkpoint.js';
export { checkpointFromJson, checkpointToJson } from './checkpoint-json.js';
export type {
  AlternateCritic,
  CollectRolloutArgs,
  EpisodeSummary,
  RolloutConfig,
  RolloutResult,
  RolloutStats,
} from './collect-rollout.js';
export { collectRollout, continueRollout, promptValuesOf } from './collect-rollout.js';
export type {
  AdvantageNormalisation,
  Algorithm,
  CandidateNormalisation,
  CriticSource,
  PpoConfig,
  TokenSpace,
} from './config.js';
// Configuration
export {
  ADAMW_FIELDS,
  checkPpoConfig,
  defaultConfig,
  pickPpoFields,
  ppoConfigSchema,
  resolveConfig,
  SAMPLER_FIELDS,
  TRAINER_FIELDS,
} from './config.js';
export type { UpdateDiagnostics, UpdateStats } from './diagnostics.js';
export { explainedVariance } from './diagnostics.js';
export {
  CheckpointMismatchError,
  NonFiniteStateError,
  NonFiniteUpdateError,
  PolicyContractError,
  PpoConfigError,
} from './errors.js';
export { clipGradNorm, gradNorm } from './grad-clip.js';
export { allowedTokenSets, nextTokenSets, restrictedLogProbs } from './label-tokens.js';
export {
  approxKl,
  clipIndicator,
  entropyBonus,
  fusedTokenLoss,
  huber,
  maskedSum,
  PPO_TOKEN_LOSS_KERNEL,
  policyLoss,
  valueClipOf,
  valueLoss,
} from './losses.js';
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
export { toPadded } from './padding.js';
export type {
  GeneratedAction,
  GenerateOptions,
  IterationPhase,
  TokenBatch,
  TokenPolicy,
  TokenScores,
} from './policy.js';
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
export type {
  CollectedRollout,
  StateLayout,
  TrainerBaseConfig,
  TrainerTypes,
  UpdateCounts,
} from './trainer-base.js';
export { requireTrainable, TrainerBase } from './trainer-base.js';
export type { CandidateDistribution } from './twosome-sampler.js';
export { argmax, candidateDistribution, candidateNormaliser } from './twosome-sampler.js';
export type { VecEnvLike } from './vec-env-like.js';
