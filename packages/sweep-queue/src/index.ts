export type { CodeVersion } from './code-version.js';
export { codeVersionOf, versionDifference } from './code-version.js';
export { checkRedis, connectionOf, RedisUnreachableError } from './connection.js';
export type { SweepJobData } from './job.js';
export { DEFAULT_QUEUE, isSweepJobData, jobIdOf } from './job.js';
export type { QueueUrl } from './queue-url.js';
export { parseQueueUrl, QueueUrlError } from './queue-url.js';
export type {
  GatherHandlers,
  GatherOutcome,
  RunInfo,
  SweepProgress,
  SweepRun,
} from './sweep.js';
export { openSweep, Sweep } from './sweep.js';
export type {
  AbortReason,
  StartWorkerOptions,
  SweepWorker,
  WorkerEnd,
  WorkerJob,
} from './worker.js';
export { startWorker } from './worker.js';
