// Everything that runs without Node built-ins (also the package's `browser` entry).

export type { CheckpointChoice } from './best-checkpoint.js';
export {
  bestCheckpoint,
  checkpointsFor,
  parseCheckpointChoice,
  saveBestCheckpoint,
} from './best-checkpoint.js';
export * from './browser.js';
export type { CheckpointMeta, CheckpointRef } from './checkpoint.js';
export {
  CheckpointLoadError,
  CheckpointWriteError,
  cleanCheckpointLeftovers,
  latestCheckpoint,
  listCheckpoints,
  loadCheckpoint,
  replaceDir,
  saveCheckpoint,
  saveCheckpointWith,
} from './checkpoint.js';
export {
  loadConfigFile,
  parseArgsWithConfig,
  parseConfigText,
  readConfigFile,
  writeFileAtomicSync,
  writeJsonAtomicSync,
} from './files.js';
export { trapInterrupts } from './interrupt.js';
export type { LockHolder, RunLock } from './lock.js';
export { lockRunDir, RunLockedError, runDirLockHolder } from './lock.js';
export type { MetricsRow } from './metrics.js';
export { MetricsLog } from './metrics.js';
export { svgToPng } from './png.js';
export type { ProgressOptions } from './progress.js';
export { formatDuration, ProgressBar } from './progress.js';
export { type CreateRunDirOptions, createRunDir, runName } from './runDir.js';
