import { packageBuild } from '../../tsup.base.js';

export default packageBuild({
  entry: ['src/index.ts', 'src/browser.ts'],
  // Optional dependencies stay imports (tsup bundles only what is not a dependency).
  external: ['@tensorflow/tfjs-backend-webgpu', 'webgpu'],
  // dawn.ts locates the `webgpu` package with import.meta in the ESM build and with require in
  // the CommonJS one, where import.meta is empty on purpose.
  esbuildOptions(options) {
    options.logOverride = { ...options.logOverride, 'empty-import-meta': 'silent' };
  },
});
