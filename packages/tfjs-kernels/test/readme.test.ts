// The README example runs against the built package and prints what the README says.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleFiles } from '@poad/dev-kit';
import { expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;

it('runs the README example and prints the numbers it shows', () => {
  const code = exampleFiles(readFileSync(join(pkgDir, 'README.md'), 'utf8')).get('example.mjs');
  expect(code).toBeDefined();
  const shown = /\n\/\/ (\[ .* \])\n$/.exec(code!)?.[1];
  expect(shown).toBeDefined();
  // Inside the package folder, so that '@poad/tfjs-kernels' resolves to this package's dist/.
  const dir = mkdtempSync(join(pkgDir, '.readme-'));
  try {
    writeFileSync(join(dir, 'example.mjs'), code!);
    const out = execFileSync(process.execPath, [join(dir, 'example.mjs')], { encoding: 'utf8' });
    expect(out.trim().split('\n').at(-1)).toBe(shown);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
