/**
 * `@poad/trainer` without Node built-ins (the package's `browser` export condition): the
 * algorithm registry (each entry builds its policy and trainer), presets, the language-model
 * policies, metrics rows, token-credit rows and episode playing. What writes run directories
 * (`train`, `runCli`, checkpoints, plots) is Node only; a browser app drives an entry's trainer
 * itself (see apps/playground).
 */

export type { MetricsRow, TokenCreditRow } from '@poad/run-kit';
export { metricsCsv, tokenCreditSvg } from '@poad/run-kit';
export { ETPO_ADAPTER_DIRS } from './algorithms/etpo.js';
export { criticOf, PPO_CRITIC_ADAPTER_DIR } from './algorithms/ppo.js';
export type { AlgorithmConfigs, AlgorithmName } from './algorithms/registry.js';
export { algorithmEntry, algorithmNames, registerAlgorithm } from './algorithms/registry.js';
export type {
  AlgorithmConfigBase,
  AlgorithmEntry,
  AlgorithmNeeds,
  AlgorithmPolicy,
  AlgorithmTrainer,
} from './algorithms/types.js';
export type { AppSpec } from './app.js';
export type { CollapseAlarm, CollapseRule, MonitorOptions } from './collapse-monitor.js';
export { CollapseMonitor, collapseRuleOf } from './collapse-monitor.js';
export { tokenCreditRows } from './credit-rows.js';
export type { SamplerConfig } from './evaluate.js';
export { samplerOptions } from './evaluate.js';
export type { BestSoFar, KeepBestRule } from './keep-best.js';
export { BestTracker, formatKeepBest, parseKeepBest } from './keep-best.js';
export { learningCurveSvg, runningMean } from './learning-curve.js';
export { metricsRow } from './metrics-row.js';
export type { PlayedEpisode } from './play.js';
export { playEpisode } from './play.js';
export type { EtpoLmPolicyOptions } from './policy/etpo-lm-policy.js';
export { EtpoLmPolicy } from './policy/etpo-lm-policy.js';
export { LmPolicy } from './policy/lm-policy.js';
export type { PromptFormat } from './policy/prompt-encoding.js';
export type { ValueCriticOptions } from './policy/value-head-critic.js';
export {
  defaultPresets,
  offeredAlgorithms,
  presetRun,
  presetValues,
  unsupportedReason,
} from './presets.js';
export type { RunOptions } from './run-options.js';
export { RUN_OPTIONS } from './run-options.js';
export type { RunIterationReport, RunTrainer, UpdateColumns } from './run-trainer.js';
export { reportOf, runTrainerOf } from './run-trainer.js';
export { decodeState, encodeState } from './state-codec.js';
