// The README's group-advantage example runs against the built package and prints what its
// `// prints:` comments say.
import { runReadmeExample } from '@poad/dev-kit';
import { expect, it } from 'vitest';

it('runs the README group-advantage example and prints the numbers it shows', () => {
  const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'group-advantages.mjs');
  expect(r.shown.length).toBeGreaterThan(0);
  expect(r.out).toEqual(r.shown);
});
