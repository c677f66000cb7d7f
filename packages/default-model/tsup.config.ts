import { packageBuild } from '../../tsup.base.js';

// `import.meta.url` in the CommonJS build.
export default packageBuild({ shims: true });
