export { bundleForBrowser } from './browser-bundle.js';
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
export { spawnApp, waitFor } from './spawn.js';
