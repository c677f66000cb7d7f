import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ALLOWED_TEST_LAYOUT } from '../src/allowed-test-layout.js';
import {
  TEST_INCLUDE,
  testLayoutProblems,
  vitestIncludes,
  workspaces,
} from '../src/test-layout.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const config = (include: string) =>
  `import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({\n  test: { include: ${include}, testTimeout: 60_000 },\n});\n`;

describe('vitestIncludes', () => {
  it("reads the one include list's patterns", () => {
    expect(vitestIncludes(config('[\'src/**/*.test.ts\', "test/**/*.test.ts"]'))).toEqual([
      'src/**/*.test.ts',
      'test/**/*.test.ts',
    ]);
    expect(vitestIncludes(config(`['${TEST_INCLUDE}']`))).toEqual([TEST_INCLUDE]);
  });

  it('is null without an include list or with two', () => {
    expect(vitestIncludes('export default defineConfig({ test: { testTimeout: 1 } });')).toBeNull();
    expect(vitestIncludes(`${config("['a']")}${config("['b']")}`)).toBeNull();
  });
});

describe('testLayoutProblems', () => {
  const root = mkdtempSync(join(tmpdir(), 'poad-test-layout-'));
  const write = (rel: string, text = '') => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  write('packages/good/package.json', '{}');
  write('packages/good/vitest.config.ts', config(`['${TEST_INCLUDE}']`));
  write('packages/good/src/x.ts');
  write('packages/good/test/x.test.ts');
  write('packages/good/test/deep/y.test.ts');
  write('packages/good/node_modules/dep/z.test.ts');
  write('packages/good/dist/x.test.js');
  write('packages/bad/package.json', '{}');
  write('packages/bad/vitest.config.ts', config("['src/**/*.test.ts', 'test/**/*.test.ts']"));
  write('packages/bad/src/x.test.ts');
  write('packages/bad/src/deep/y.spec.ts');
  write('packages/bad/bench/b.test.mjs');
  write('apps/none/package.json', '{}');
  write('apps/none/src/main.ts');
  write('apps/not-a-workspace/src/x.test.ts');

  it('finds the workspaces: folders of packages/, apps/ and templates/ with a package.json', () => {
    expect(workspaces(root)).toEqual(['apps/none', 'packages/bad', 'packages/good']);
  });

  it('passes tests under test/ (at any depth) and what installs and builds write', () => {
    expect(testLayoutProblems(root, 'packages/good')).toEqual([]);
    expect(testLayoutProblems(root, 'apps/none')).toEqual([]);
  });

  it('names each test outside test/ and a vitest include that reads elsewhere', () => {
    expect(testLayoutProblems(root, 'packages/bad')).toEqual([
      'packages/bad/bench/b.test.mjs: a test outside packages/bad/test/ (move it there with git mv)',
      'packages/bad/src/deep/y.spec.ts: a test outside packages/bad/test/ (move it there with git mv)',
      'packages/bad/src/x.test.ts: a test outside packages/bad/test/ (move it there with git mv)',
      `packages/bad/vitest.config.ts: include is ["src/**/*.test.ts","test/**/*.test.ts"]; it must be ['${TEST_INCLUDE}']`,
    ]);
  });
});

describe('this repository', () => {
  const all = workspaces(REPO_ROOT);

  it('keeps every test under test/ and every vitest config reading only test/', () => {
    const problems = all
      .filter((w) => !ALLOWED_TEST_LAYOUT.includes(w))
      .flatMap((w) => testLayoutProblems(REPO_ROOT, w));
    expect(problems).toEqual([]);
  });

  it('has no allow-list entry that follows the rule (remove it from src/allowed-test-layout.ts)', () => {
    const stale = ALLOWED_TEST_LAYOUT.filter(
      (w) => !all.includes(w) || testLayoutProblems(REPO_ROOT, w).length === 0,
    );
    expect(stale).toEqual([]);
  });
});
