import { expectBrowserBundle, expectBrowserSubset } from '@poad/dev-kit';
import { describe, it } from 'vitest';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('bundles for a browser without any Node built-in', async () => {
    await expectBrowserBundle(new URL('../src/browser.ts', import.meta.url).pathname);
  });

  it('is a subset of the Node entry with the same functions', () => {
    expectBrowserSubset(browser, node, {
      present: ['tokenizerFromJson', 'peftAdapterFiles'],
      absent: ['loadTokenizer', 'readCheckpoint'],
    });
  });
});
