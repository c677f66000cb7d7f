import { expectBrowserBundle, expectBrowserSubset } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import { metricsCsv } from '../src/csv.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('bundles for a browser without any Node built-in', async () => {
    await expectBrowserBundle(new URL('../src/browser.ts', import.meta.url).pathname);
  });

  it('is a subset of the Node entry with the same functions', () => {
    expectBrowserSubset(browser, node, { absent: ['svgToPng'] });
  });

  it('writes metrics as CSV: union of columns, empty cells for null, quoted text', () => {
    expect(
      metricsCsv([
        { a: 1, b: null },
        { a: 2, c: 'x,"y"' },
      ]),
    ).toBe('a,b,c\n1,,\n2,,"x,""y"""\n');
  });
});
