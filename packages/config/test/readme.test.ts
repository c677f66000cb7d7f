// The README's example runs against the built package and prints what its `// prints:` lines say.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleFiles } from '@poad/dev-kit';
import { expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;

it('runs the README example and prints what it shows', () => {
  if (!existsSync(join(pkgDir, 'dist', 'index.js')))
    throw new Error('dist/ is missing: run `npm run build -w @poad/config` first');
  const code = exampleFiles(readFileSync(join(pkgDir, 'README.md'), 'utf8')).get('example.mjs');
  expect(code).toBeDefined();
  const shown = [...code!.matchAll(/^\/\/ prints: (.*)$/gm)].map((m) => m[1]);
  expect(shown).toHaveLength(3);
  // Inside the package folder, so that '@poad/config' resolves to this package's dist/.
  const dir = mkdtempSync(join(pkgDir, '.readme-'));
  try {
    writeFileSync(join(dir, 'example.mjs'), code!);
    const out = execFileSync(process.execPath, [join(dir, 'example.mjs')], { encoding: 'utf8' });
    expect(out.trimEnd().split('\n')).toEqual(shown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
