import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath } from '@poad/default-model';
import { defineConfig, type Plugin } from 'vite';
import { noNodeBuiltins } from './vite-plugins.js';

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
});
