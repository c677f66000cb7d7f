import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import { codeVersionOf, versionDifference } from '../src/index.js';

const tempDir = tempDirs('poad-code-version-', { until: 'file' });

/** A repository with a root package and workspaces packages/a, apps/b. */
function repo(): string {
  const root = tempDir();
  const pkg = (dir: string, name: string, version: string) => {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'package.json'), JSON.stringify({ name, version }));
  };
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ name: 'root', version: '1.0.0', workspaces: ['packages/*', 'apps/*'] }),
  );
  pkg('packages/a', '@x/a', '0.2.0');
  pkg('apps/b', '@x/b', '0.0.1');
  mkdirSync(join(root, 'packages', 'not-a-package'));
  return root;
}

describe('codeVersionOf', () => {
  it('lists every workspace package with its version, and no commit outside git', () => {
    const root = repo();
    expect(codeVersionOf(root)).toEqual({
      packages: { '@x/a': '0.2.0', '@x/b': '0.0.1', root: '1.0.0' },
      commit: null,
    });
  });

  it('records the git commit of a checkout', () => {
    const root = repo();
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x');
    const head = git('rev-parse', 'HEAD');
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(codeVersionOf(root).commit).toBe(head);
  });
});

describe('versionDifference', () => {
  const mine = { packages: { '@x/a': '0.2.0', '@x/b': '0.0.1' }, commit: 'a'.repeat(40) };

  it('is null for the same version', () => {
    expect(versionDifference(structuredClone(mine), mine)).toBeNull();
  });

  it('names another commit and each package that differs, with both versions', () => {
    const theirs = { packages: { '@x/a': '0.3.0', '@x/c': '1.0.0' }, commit: 'b'.repeat(40) };
    expect(versionDifference(theirs, mine)).toBe(
      `another code version: it was queued from ${'b'.repeat(12)}, this worker runs ${'a'.repeat(12)}; package versions differ (@x/a 0.3.0 there, 0.2.0 here; @x/c 1.0.0 there, absent here; @x/b absent there, 0.0.1 here)`,
    );
    expect(versionDifference({ ...mine, commit: null }, mine)).toMatch(
      /queued from no git commit, this worker runs a{12}$/,
    );
  });

  it('refuses a job without a code version', () => {
    expect(versionDifference(undefined, mine)).toBe('the job carries no code version');
    expect(versionDifference({ commit: 'x' }, mine)).toBe('the job carries no code version');
  });
});
