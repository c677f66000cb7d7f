export { registerExampleEnvs } from './register.js';
export type { TreasureOptions } from './treasure-env.js';
export { createTreasureEnv, TREASURE_LABELS, TreasureEnv } from './treasure-env.js';
