import { join } from 'node:path';
import { expectBrowserBundle } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('exports what the Node entry exports', () => {
    expect(Object.keys(browser).sort()).toEqual(Object.keys(node).sort());
  });

  it('bundles for a browser without any Node built-in', async () => {
    const code = await expectBrowserBundle(join(import.meta.dirname, '../src/browser.ts'), [
      '@tensorflow/tfjs-backend-webgpu',
      '@tensorflow/tfjs-backend-wasm',
    ]);
    // Neither Dawn nor the optional native packages are reachable from it.
    expect(code).not.toMatch(/@poad\/tfjs-native|@tensorflow\/tfjs-node/);
    expect(code.length).toBeGreaterThan(10_000);
  });
});
