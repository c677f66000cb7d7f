// The README's group-advantage example runs against the built package and prints what its
// `// prints:` comments say.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleFiles } from '@poad/dev-kit';
import { expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;

it('runs the README group-advantage example and prints the numbers it shows', () => {
  if (!existsSync(join(pkgDir, 'dist', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build -w @poad/bellman` first');
  }
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const code = exampleFiles(readme).get('group-advantages.mjs');
  expect(code).toBeDefined();
  const shown = [...code!.matchAll(/^\/\/ prints: (.*)$/gm)].map((m) => m[1]);
  expect(shown.length).toBeGreaterThan(0);
  // Inside the package folder, so that '@poad/bellman' resolves to this package's dist/.
  const dir = mkdtempSync(join(pkgDir, '.readme-'));
  try {
    writeFileSync(join(dir, 'group-advantages.mjs'), code!);
    const out = execFileSync(process.execPath, [join(dir, 'group-advantages.mjs')], {
      encoding: 'utf8',
    });
    expect(out.trim().split('\n')).toEqual(shown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
