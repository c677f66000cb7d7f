// The README's example runs against the built packages.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runReadmeExample } from '@poad/dev-kit';
import { expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;

it('runs the README example', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(code).toBeDefined();
  const out = runReadmeExample(pkgDir, 'example.mts', code).out.join('\n');
  expect(out).toMatch(/^backend: (wasm|tensorflow|webgpu)$/m);
  expect(out).toMatch(/^logits: 1024$/m);
  expect(out).toMatch(/^values: /m);
}, 120_000);
