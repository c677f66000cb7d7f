import { packageBuild } from '../../tsup.base.js';

export default packageBuild({
  entry: ['src/index.ts', 'src/browser.ts', 'src/bin/poad.ts'],
  // `import.meta.url` in the CommonJS build.
  shims: true,
});
