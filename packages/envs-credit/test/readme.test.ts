// The README's example runs against the built package and prints what its `// prints:` lines say.
import { runReadmeExample } from '@poad/dev-kit';
import { expect, it } from 'vitest';

it('runs the README example and prints the numbers it shows', () => {
  const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'example.mjs');
  expect(r.shown).toHaveLength(4);
  expect(r.out).toEqual(r.shown);
});
