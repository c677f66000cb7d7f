import { defineHostileSuite } from './hostile-suite.js';

await defineHostileSuite('namespaces');
