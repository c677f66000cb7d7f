export { DEFAULT_MODEL, spawnApp, waitFor } from '../test/spawn.js';
