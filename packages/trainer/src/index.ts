// Training from code: one call trains an environment and writes a run directory.

// The training command line the apps share.
export { releaseBackend } from '@poad/lora-model';
// The language-model agent, for driving `@poad/ppo` directly.
export type { Agent } from './agent.js';
export type { AppSpec } from './app.js';
// Everything that runs without Node built-ins (also the package's `browser` entry).
export * from './browser.js';
export type { RunCliHooks } from './cli.js';
export { EXIT_CODES, runCli, runMain, trainingOptionsOf } from './cli.js';
export type { LmAgentOptions } from './create-lm-agent.js';
export { createLmAgent, ETPO_ADAPTER_DIRS } from './create-lm-agent.js';
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
export { DEFAULT_MODEL_OPTION, resolveModelPath } from './model-path.js';
export { trainingSchema } from './options.js';
export type { TrainingOptions } from './resolve.js';
export { plannedIterations } from './train.js';
