import { builtinModules } from 'node:module';
import type { Plugin } from 'vite';

/**
 * Fails the build when this project's browser code imports a Node built-in: every package of the
 * project the page uses must resolve to its browser entry (the `browser` export condition).
 * Third-party code is left to the bundler (tfjs-backend-wasm's Emscripten glue names `fs` behind
 * a Node check and maps it away in its `browser` field).
 */
export function noNodeBuiltins(): Plugin {
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  return {
    name: 'poad-no-node-builtins',
    enforce: 'pre',
    resolveId(id, importer) {
      const ours =
        importer !== undefined &&
        /\/(packages|apps)\/[^/]+\/(src|dist)\//.test(importer) &&
        !importer.includes('/node_modules/');
      if (ours && (builtins.has(id) || id.startsWith('node:'))) {
        this.error(
          `${importer ?? 'the page'} imports the Node built-in "${id}"; browser code must not (give the package a browser entry)`,
        );
      }
      return null;
    },
  };
}
