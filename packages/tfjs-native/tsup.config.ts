import { packageBuild } from '../../tsup.base.js';

export default packageBuild({ shims: true });
