// The README example runs against the built package and prints what the README says.
import { runReadmeExample } from '@poad/dev-kit';
import { expect, it } from 'vitest';

it('runs the README example and prints the numbers it shows', () => {
  const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'example.mjs');
  const shown = /\n\/\/ (\[ .* \])\n$/.exec(r.code)?.[1];
  expect(shown).toBeDefined();
  expect(r.out.at(-1)).toBe(shown);
}, 60_000);
