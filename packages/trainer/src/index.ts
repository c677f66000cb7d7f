// @poad/trainer: train a language-model agent with any registered algorithm, from code (`train`)
// or a command line (`runCli`), into run directories that resume bit for bit.

export { releaseBackend } from '@poad/tfjs-kernels';
export type { Agent } from './agent.js';
// Everything that runs without Node built-ins (also the package's `browser` entry).
export * from './browser.js';
export type { RunCliHooks } from './cli.js';
export { EXIT_CODES, runCli, runConfigOf, runMain } from './cli.js';
export type { LmAgentOptions } from './create-lm-agent.js';
export { createLmAgent } from './create-lm-agent.js';
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
export { DEFAULT_MODEL_OPTION, resolveModelPath } from './model-path.js';
export type { ChooseProductsOptions, ProductSource } from './products.js';
export { chooseProducts, productCacheDir, productCacheFile } from './products.js';
export type { RunConfig, ValueSources } from './run-config.js';
export {
  flatRunConfig,
  loadRunConfig,
  resolveRun,
  runSettings,
} from './run-config.js';
export type { MatMulOption } from './run-options.js';
export { MATMUL_CHOICES } from './run-options.js';
export { plannedIterations, RunFileError } from './train.js';
