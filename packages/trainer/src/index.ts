// Training from code: one call trains an environment and writes a run directory.

// The training command line the apps share.
export { releaseBackend } from '@poad/lora-model';
// The language-model agent, for driving `@poad/ppo` directly.
export type { Agent } from './agent.js';
export type { AppSpec } from './app.js';
export type { RunCliHooks } from './cli.js';
export { EXIT_CODES, runCli, runMain, trainingOptionsOf } from './cli.js';
export type { LmAgentOptions } from './create-lm-agent.js';
export { createLmAgent, ETPO_ADAPTER_DIRS } from './create-lm-agent.js';
export type { EtpoLmPolicyOptions } from './etpo-policy.js';
export { EtpoLmPolicy } from './etpo-policy.js';
export type { EvalResult } from './evaluate.js';
export type {
  CheckpointRunOptions,
  EnvChoice,
  EnvFactory,
  EvaluateOptions,
  PlayOptions,
  TrainingOptionValues,
  TrainOptions,
  TrainResult,
} from './library.js';
export { evaluate, play, train } from './library.js';
export { LmPolicy } from './lm-agent.js';
export { DEFAULT_MODEL_OPTION, resolveModelPath } from './model-path.js';
export { trainingSchema } from './options.js';
export type { PlayedEpisode } from './play.js';
export type { RunPreset } from './presets.js';
export { runPreset } from './presets.js';
export type { TrainingOptions } from './resolve.js';
export type { RunIterationReport } from './run-trainer.js';
export { plannedIterations } from './train.js';
