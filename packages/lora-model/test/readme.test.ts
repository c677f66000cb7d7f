// The README's example runs against the built packages.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;

it('runs the README example', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(code).toBeDefined();
  // Inside the package folder, so that '@poad/lora-model' resolves to this package's dist/.
  const dir = mkdtempSync(join(pkgDir, '.readme-'));
  try {
    writeFileSync(join(dir, 'example.mts'), code!);
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(dir, 'example.mts')], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/^backend: (wasm|tensorflow|webgpu)$/m);
    expect(out).toMatch(/^logits: 1024$/m);
    expect(out).toMatch(/^values: /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
