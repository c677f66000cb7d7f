export {
  checkPublished,
  exampleFiles,
  installOffline,
  packedFiles,
  packInto,
  rootBin,
  runTool,
} from './published.js';
export { spawnApp, waitFor } from './spawn.js';
