import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The one place a workspace's tests live (docs/contributing.md#tests): its `test/` folder, which
 * vitest reads with exactly this pattern and nothing else.
 */
export const TEST_INCLUDE = 'test/**/*.test.ts';

/** The folders that hold workspaces: each child with a package.json is one. */
const WORKSPACE_FOLDERS = ['packages', 'apps', 'templates'] as const;

/** Folders that commands write or install into; they never hold a workspace's own tests. */
const SKIPPED = new Set(['node_modules', 'dist', 'coverage']);

/** A test file by its name, whatever its JavaScript or TypeScript extension. */
const TEST_FILE = /\.(?:test|spec)\.[cm]?[jt]sx?$/;

/** The workspaces of the repository at `root`, relative to it (`packages/bellman`), sorted. */
export function workspaces(root: string): string[] {
  const out: string[] = [];
  for (const folder of WORKSPACE_FOLDERS) {
    const dir = join(root, folder);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && existsSync(join(dir, entry.name, 'package.json')))
        out.push(`${folder}/${entry.name}`);
    }
  }
  return out.sort();
}

/** The test files of `workspace` (relative to `root`) that are not under its `test/` folder. */
function testsOutsideTestFolder(root: string, workspace: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (SKIPPED.has(entry.name) || entry.name.startsWith('.')) continue;
        if (path === `${workspace}/test`) continue;
        walk(path);
      } else if (TEST_FILE.test(entry.name)) out.push(path);
    }
  };
  walk(workspace);
  return out.sort();
}

/**
 * The patterns of the `include` list in a vitest config's text, or null when it has none or
 * more than one (then the config is not one this check can read).
 */
export function vitestIncludes(configText: string): string[] | null {
  const lists = [...configText.matchAll(/\binclude:\s*\[([^\]]*)\]/g)];
  if (lists.length !== 1) return null;
  return [...lists[0]![1]!.matchAll(/(['"`])(.*?)\1/g)].map((m) => m[2]!);
}

/**
 * What in `workspace` (relative to `root`) breaks the rule of docs/contributing.md#tests, one
 * sentence each, naming the file and the fix: a test file outside `test/` (under `src/` tsup
 * and a package's sources would hold it), or a vitest config whose `include` is not exactly
 * {@link TEST_INCLUDE}. A workspace with no vitest config and no test breaks nothing.
 */
export function testLayoutProblems(root: string, workspace: string): string[] {
  const problems = testsOutsideTestFolder(root, workspace).map(
    (file) => `${file}: a test outside ${workspace}/test/ (move it there with git mv)`,
  );
  const config = join(root, workspace, 'vitest.config.ts');
  if (existsSync(config)) {
    const includes = vitestIncludes(readFileSync(config, 'utf8'));
    if (includes === null || includes.length !== 1 || includes[0] !== TEST_INCLUDE)
      problems.push(
        `${workspace}/vitest.config.ts: include is ${includes === null ? 'not one list' : JSON.stringify(includes)}; it must be ['${TEST_INCLUDE}']`,
      );
  }
  return problems;
}
