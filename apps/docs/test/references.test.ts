import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ALLOWED_BROKEN_REFERENCES } from '../src/allowed-references.js';
import { REPO_ROOT } from '../src/pages.js';
import {
  checkMarkdownFile,
  checkRepository,
  checkSourceFile,
  fileNamesIn,
  Repository,
  stale,
  unlisted,
} from '../src/references.js';

describe('fileNamesIn', () => {
  it('takes root paths and .md names, without anchors, line numbers and punctuation', () => {
    expect(
      fileNamesIn(
        "see docs/results.md#claims-of-the-paper-here, (apps/compare/src/stats.ts:120) and bellman.md's proof.",
      ),
    ).toEqual([
      { name: 'docs/results.md', anchor: 'claims-of-the-paper-here' },
      { name: 'apps/compare/src/stats.ts', anchor: null },
      { name: 'bellman.md', anchor: null },
    ]);
  });

  it('leaves out patterns, placeholders, URLs and other words', () => {
    expect(
      fileNamesIn(
        'packages/envs-<name> apps/train-* results/x/*.json https://x.org/a.md config.json src/index.ts .md',
      ),
    ).toEqual([]);
  });
});

describe('checking a repository', () => {
  const root = mkdtempSync(join(tmpdir(), 'poad-docs-'));
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  write('README.md', '# Top\n');
  write('docs/a.md', '# A page\n\n## Part two\n');
  write('packages/p/src/x.ts', 'export const x = 1;\n');
  write('packages/p/scripts/tool.py', '\n');
  write('.gitignore', 'docs/build/\n');
  spawnSync('git', ['init', '-q'], { cwd: root });

  it('accepts links, anchors and names that resolve', () => {
    write(
      'docs/ok.md',
      [
        '# Ok',
        '[a](a.md#part-two), [self](#ok), [top](../README.md), [folder](../packages/p)',
        'See `packages/p/src/x.ts`, a.md, docs/a.md#a-page and report.md.',
        'Outputs: `docs/build/work/` is written by a command.',
      ].join('\n'),
    );
    expect(checkMarkdownFile(new Repository(root), join(root, 'docs/ok.md'))).toEqual([]);
  });

  it('reports each missing file and anchor with its line', () => {
    write(
      'docs/bad.md',
      [
        '# Bad',
        '[gone](gone.md) and [part](a.md#part-three)',
        'Cites algorithms.md and `packages/p/src/missing.ts`, and [here](#nowhere).',
      ].join('\n'),
    );
    const broken = checkMarkdownFile(new Repository(root), join(root, 'docs/bad.md'));
    expect(broken.map((b) => [b.line, b.reference])).toEqual([
      [2, 'gone.md'],
      [2, 'a.md#part-three'],
      [3, '#nowhere'],
      [3, 'packages/p/src/missing.ts'],
      [3, 'algorithms.md'],
    ]);
    expect(broken[1]!.reason).toBe('docs/a.md has no heading with the anchor #part-three');
  });

  it("reads source comments, and root paths there may be the package's own", () => {
    write(
      'packages/p/src/y.ts',
      [
        '// made by scripts/tool.py (see docs/a.md#part-two)',
        "const s = 'algorithms.md';",
        '/** From algorithms.md §7 and docs/a.md#part-nine. */',
        'export { s };',
      ].join('\n'),
    );
    const broken = checkSourceFile(new Repository(root), join(root, 'packages/p/src/y.ts'));
    expect(broken.map((b) => [b.line, b.reference])).toEqual([
      [3, 'algorithms.md'],
      [3, 'docs/a.md#part-nine'],
    ]);
  });

  it('lists unlisted and stale allow-list entries', () => {
    const broken = [
      { file: 'a.ts', line: 1, reference: 'x.md', reason: 'no such file' },
      { file: 'b.ts', line: 2, reference: 'y.md', reason: 'no such file' },
    ];
    const allowed = [
      { file: 'a.ts', reference: 'x.md' },
      { file: 'c.ts', reference: 'z.md' },
    ];
    expect(unlisted(broken, allowed)).toEqual([broken[1]]);
    expect(stale(broken, allowed)).toEqual([{ file: 'c.ts', reference: 'z.md' }]);
  });
});

describe('this repository', () => {
  const broken = checkRepository(new Repository(REPO_ROOT));

  it('has no broken link, anchor or file name in README.md, docs/ and source comments', () => {
    const report = unlisted(broken, ALLOWED_BROKEN_REFERENCES).map(
      (b) => `${b.file}:${b.line}: ${b.reference}: ${b.reason}`,
    );
    expect(report).toEqual([]);
  });

  it('has no allow-list entry that no longer occurs (remove it from src/allowed-references.ts)', () => {
    expect(stale(broken, ALLOWED_BROKEN_REFERENCES)).toEqual([]);
  });
});
