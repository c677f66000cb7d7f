import { bundleForBrowser } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import { metricsCsv } from '../src/csv.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('bundles for a browser without any Node built-in', async () => {
    const { errors } = await bundleForBrowser(
      new URL('../src/browser.ts', import.meta.url).pathname,
    );
    expect(errors).toEqual([]);
  });

  it('is a subset of the Node entry with the same functions', () => {
    for (const name of Object.keys(browser)) {
      expect((node as Record<string, unknown>)[name], name).toBe(
        (browser as Record<string, unknown>)[name],
      );
    }
    expect(Object.keys(browser)).not.toContain('svgToPng');
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
