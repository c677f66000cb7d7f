/**
 * `@poad/trainer` without Node built-ins (the package's `browser` export condition): the
 * language-model policies, the trainers of every algorithm behind one interface, the presets,
 * metrics rows, token-credit rows and episode playing. What writes run directories (`train`,
 * `runCli`, checkpoints, plots) is Node only; a browser app drives {@link createRunTrainer}
 * itself (see apps/playground).
 */

export type { MetricsRow, TokenCreditRow } from '@poad/run-kit';
export { metricsCsv, tokenCreditSvg } from '@poad/run-kit';
export { tokenCreditRows } from './credit-rows.js';
export type { EtpoLmPolicyOptions } from './etpo-policy.js';
export { EtpoLmPolicy } from './etpo-policy.js';
export { samplerOptions } from './evaluate.js';
export { learningCurveSvg, runningMean } from './learning-curve.js';
export { LmPolicy } from './lm-agent.js';
export { metricsRow } from './metrics-row.js';
export type { PlayedEpisode } from './play.js';
export { playEpisode } from './play.js';
export type { RunPreset } from './presets.js';
export { ETPO_SETTINGS, runPreset } from './presets.js';
export type { RunIterationReport, RunTrainer, RunTrainerSpec } from './run-trainer.js';
export { createRunTrainer } from './run-trainer.js';
export { decodeState, encodeState } from './state-codec.js';
