// The README's examples run against the built package and print what their `// prints:`
// comments say.
import { runReadmeExample } from '@poad/dev-kit';
import { expect, it } from 'vitest';

it('runs the README group-advantage example and prints the numbers it shows', () => {
  const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'group-advantages.mjs');
  expect(r.shown.length).toBeGreaterThan(0);
  expect(r.out).toEqual(r.shown);
});

it('runs the README prefix-value example and prints the numbers it shows', () => {
  const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'prefix-values.mjs');
  expect(r.shown).toHaveLength(3);
  expect(r.out).toEqual(r.shown);
});
