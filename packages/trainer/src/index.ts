// @poad/trainer: train a language-model agent with any registered algorithm, from code (`train`)
// or a command line (`runCli`), into run directories that resume bit for bit.

export { releaseBackend } from '@poad/tfjs-kernels';
export type { Agent } from './agent/agent.js';
export type { LmAgentOptions } from './agent/create-lm-agent.js';
export { createLmAgent } from './agent/create-lm-agent.js';
export { DEFAULT_MODEL_OPTION, resolveModelPath } from './agent/model-path.js';
export type { ChooseProductsOptions, ProductSource } from './agent/products.js';
export { chooseProducts, productCacheDir, productCacheFile } from './agent/products.js';
// Everything that runs without Node built-ins (also the package's `browser` entry).
export * from './browser.js';
export type { RunCliHooks } from './cli.js';
export { EXIT_CODES, runCli, runConfigOf, runMain } from './cli.js';
export type { EvalResult } from './evaluate.js';
export { actionProbabilities } from './evaluate.js';
export type {
  CheckpointRunOptions,
  EnvChoice,
  EnvFactory,
  EvaluateOptions,
  PlayOptions,
  TrainExtras,
  TrainingOptionValues,
  TrainOptions,
  TrainResult,
} from './library.js';
export { evaluate, play, train } from './library.js';
export type { PoadContext } from './poad.js';
export { environmentPackages, loadEnvironments, poadMain, registeredApp } from './poad.js';
export type { ExactValueKind, ExactValues } from './policy/oracle-critic.js';
export { oracleCritic } from './policy/oracle-critic.js';
export type { CommandLineRun, RunConfig, ValueSources } from './run-config.js';
export { loadRunConfig, resolveRun } from './run-config.js';
export type { MatMulOption } from './run-options.js';
export { MATMUL_CHOICES } from './run-options.js';
export { flatRunConfig, runSettings } from './run-settings.js';
export { plannedIterations, RunFileError } from './train.js';
