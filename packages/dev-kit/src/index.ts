export { bundleForBrowser, expectBrowserBundle, expectBrowserSubset } from './browser-bundle.js';
export type { FakeFile, FakeHub, FakeRepo, LoggedRequest } from './fake-hub.js';
export { startFakeHub } from './fake-hub.js';
export type { GpuForTests, WebGpuBackend } from './gpu.js';
export { expectGpuUnderCi, startWebGpuForTests, webGpuTestFile } from './gpu.js';
export { logProbStatsGradientF64 } from './log-prob-stats.js';
export { expectNear } from './near.js';
export { publicNames } from './public-names.js';
export {
  checkPublished,
  exampleFiles,
  installOffline,
  packedFiles,
  packInto,
  rootBin,
  runTool,
  runToolAsync,
  typecheckSnippet,
} from './published.js';
export type { ReadmeExampleRun } from './readme-example.js';
export { runReadmeExample } from './readme-example.js';
export type { RedisServer } from './redis-server.js';
export { RedisServerMissingError, redisServerPath, startRedis } from './redis-server.js';
export { mulberry32 } from './seeded.js';
export { spawnApp, waitFor } from './spawn.js';
export type { TempDirs } from './temp-dirs.js';
export { tempDirs } from './temp-dirs.js';
export type {
  CommandResult,
  TrainingHarness,
  TrainingHarnessOptions,
} from './training-harness.js';
export { captureStdout, metricsRows, TINY_RUN, trainingHarness } from './training-harness.js';
export { folderProgress, inCI, waitUntil, withProgress } from './waiting.js';
