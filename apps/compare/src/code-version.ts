// The code version of this checkout, as a queued run carries it and a worker checks it.
import { fileURLToPath } from 'node:url';
import { type CodeVersion, codeVersionOf } from '@poad/sweep-queue';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Every workspace package's version and the git commit of this repository. Under the test runner
 * (`VITEST=true`, which child processes inherit) `POAD_TEST_CODE_COMMIT` replaces the commit, so
 * that a test can start a worker of another code version.
 */
export function localCodeVersion(): CodeVersion {
  const version = codeVersionOf(ROOT);
  const forged = process.env.VITEST === 'true' ? process.env.POAD_TEST_CODE_COMMIT : undefined;
  return forged ? { ...version, commit: forged } : version;
}
