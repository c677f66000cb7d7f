export type { CheckEnvOptions, CheckEnvReport } from './check-env.js';
export { checkEnv } from './check-env.js';
export { checkEnvOutput } from './check-output.js';
export type { EnvOutputSite } from './errors.js';
export {
  ConformanceError,
  DuplicateEnvError,
  EnvArgumentError,
  EnvOutputError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  UnknownEnvError,
} from './errors.js';
export { findLabelProblem } from './labels.js';
export type { EnvPreset, EnvPresets, EnvTraits, PresetValues } from './presets.js';
export { SMALL_MODEL_VALUES } from './presets.js';
export type { EnvSpec } from './registry.js';
export { envSpec, listEnvs, makeEnv, registerEnv, unregisterEnv } from './registry.js';
export { discountedReturn, ReturnTracker } from './returns.js';
export type { Rng, RngState } from './rng.js';
export { createRng, deriveSeed, mix32 } from './rng.js';
export type { EnvFactory, EnvMeta, TextEnv, TextStep } from './types.js';
export type { EpisodeStats, VecEnvOptions, VecEnvState } from './vec-env.js';
export { makeVecEnv, VecEnv } from './vec-env.js';
