import { defineHostileSuite } from './hostile-suite.js';

// The same suite with every run starting its own interpreter through unshare (no fork server).
await defineHostileSuite('namespaces', false);
