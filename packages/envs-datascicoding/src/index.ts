export { AucError, binaryRocAuc, meanAndStd, splitRocAuc } from './auc.js';
export type {
  BuiltinDatasetName,
  CsvDatasetSpec,
  Dataset,
  DatasetSpec,
  DatasetSplit,
  HeldOutRows,
  HoldoutSpec,
  OpenMLDatasetSpec,
} from './datasets.js';
export {
  assertSplittable,
  BUILTIN_DATASETS,
  checkDatasetSpec,
  DEFAULT_MAX_ROWS,
  datasetName,
  loadDataset,
  SPLIT_COUNT,
} from './datasets.js';
export type { DataSciCodingEnv, DataSciCodingOptions } from './env.js';
export { createDataSciCodingEnv, DEFAULT_MAX_ATTEMPTS } from './env.js';
export {
  DataSciOptionError,
  DatasetError,
  EnvBusyError,
  PYTHON_INSTALL_HINT,
  PythonUnavailableError,
  SandboxUnavailableError,
} from './errors.js';
export type { IsolationProbe, IsolationRequest } from './isolation.js';
export { chooseIsolation, probeIsolation } from './isolation.js';
export type { SandboxLimits, TimeLimit } from './limits.js';
export {
  CPU_TIME_BACKSTOP_FACTOR,
  CPU_TIME_DEFAULT_SECONDS,
  DEFAULT_LIMITS,
  resolveLimits,
  TIME_LIMITS,
} from './limits.js';
export { defaultEvaluationPool, EvaluationPool } from './pool.js';
export { DATASCICODING_PRESETS } from './presets.js';
export type { PromptData, PromptParts } from './prompts.js';
export {
  assembleProgram,
  infillPrompt,
  initialPrompt,
  reflectionPrompt,
  stripTrailingReturn,
} from './prompts.js';
export type { PythonInfo } from './python.js';
export { checkPython, DEFAULT_PYTHON } from './python.js';
export { registerDataSciCodingEnvs } from './register.js';
export type { IsolationMode } from './sandbox.js';
export { SANDBOX_MARKER } from './sandbox.js';
export { closeForkServers, forkServerProblem } from './sandbox-server.js';
export type { ScoreCache, ScoreKeyParts } from './score-cache.js';
export {
  DiskScoreCache,
  defaultScoreCache,
  defaultScoreCacheDir,
  isCacheable,
  MemoryScoreCache,
  scoreKey,
} from './score-cache.js';
export type { EvaluateOptions, Evaluation, FailureReason } from './scoring.js';
export { DEFAULT_BANNED, evaluateHeldOut, evaluateModule, evaluateProgram } from './scoring.js';
export type { SandboxData, ScoringRule } from './seeding.js';
export {
  checkScoringRule,
  DEFAULT_SCORING,
  datasetDigest,
  LEGACY_SCORING,
  programSeed,
  SCORING_HASH_SEED,
  SCORING_RULES,
} from './seeding.js';
