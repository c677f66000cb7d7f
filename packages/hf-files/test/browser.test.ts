import { bundleForBrowser } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('bundles for a browser without any Node built-in', async () => {
    const { errors } = await bundleForBrowser(
      new URL('../src/browser.ts', import.meta.url).pathname,
    );
    expect(errors).toEqual([]);
  });

  it('is a subset of the Node entry with the same functions', () => {
    const names = Object.keys(browser);
    expect(names).toContain('tokenizerFromJson');
    expect(names).toContain('peftAdapterFiles');
    for (const name of names) {
      expect((node as Record<string, unknown>)[name], name).toBe(
        (browser as Record<string, unknown>)[name],
      );
    }
    expect(names).not.toContain('loadTokenizer');
    expect(names).not.toContain('readCheckpoint');
  });
});
