import { defineConfig, type Options } from 'tsup';

/**
 * The build every package shares: ESM and CommonJS from `src/index.ts`, with `.d.ts` files and
 * source maps, for ES2022, into a cleaned `dist/`. Each field of `options` replaces the shared
 * one (`entry` for more entry points, `shims` for `import.meta.url` in the CommonJS build).
 */
export function packageBuild(options: Options = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'es2022',
    ...options,
  });
}
