import { createReadStream, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { defaultModelPath } from '@poad/default-model';
import { defineConfig, type Plugin } from 'vite';

/** The embedded default model's files, served and shipped under models/default/. */
const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];

function embeddedModel(): Plugin {
  return {
    name: 'poad-embedded-model',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const m = /\/models\/default\/([^/?]+)/.exec(req.url ?? '');
        if (!m || !MODEL_FILES.includes(m[1]!)) return next();
        res.setHeader(
          'Content-Type',
          m[1]!.endsWith('.json') ? 'application/json' : 'application/octet-stream',
        );
        createReadStream(join(defaultModelPath, m[1]!)).pipe(res);
      });
    },
    generateBundle() {
      for (const f of MODEL_FILES) {
        this.emitFile({
          type: 'asset',
          fileName: `models/default/${f}`,
          source: readFileSync(join(defaultModelPath, f)),
        });
      }
    },
  };
}

/**
 * Fails the build when this project's browser code imports a Node built-in: every package of the
 * project the page uses must resolve to its browser entry (the `browser` export condition).
 * Third-party code is left to the bundler (tfjs-backend-wasm's Emscripten glue names `fs` behind
 * a Node check and maps it away in its `browser` field).
 */
function noNodeBuiltins(): Plugin {
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

// Cross-origin isolation (COOP + COEP) lets the wasm backend use threads.
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  base: './',
  plugins: [noNodeBuiltins(), embeddedModel()],
  worker: { format: 'es', plugins: () => [noNodeBuiltins()] },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
  server: { headers: isolation },
  preview: { headers: isolation },
  optimizeDeps: { exclude: ['@tensorflow/tfjs-backend-wasm'] },
});
