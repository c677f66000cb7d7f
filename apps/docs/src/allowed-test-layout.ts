/**
 * Workspaces that do not follow the tests rule of docs/contributing.md#tests yet: a test under
 * `src/`, or a vitest config that still reads `src/`. Their owners move them to `test/` and
 * remove the entry; the test fails on any other workspace that breaks the rule and on an entry
 * that follows it, so the list can only shrink.
 */
export const ALLOWED_TEST_LAYOUT: readonly string[] = [];
