import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireChromium } from './chromium.js';
import { serveStatic } from './serve.js';

// The WebGPU path of the page in headless Chromium: with --enable-unsafe-webgpu Chromium offers
// its software adapter (SwiftShader), which the page accepts with ?allowSoftware=1. It checks that
// the TF.js webgpu backend and the package's WGSL kernels run and train in a browser; speed on
// a software adapter means nothing.

const root = new URL('..', import.meta.url).pathname;
let server: Server;
let url: string;
let browser: Browser;

beforeAll(async () => {
  const executablePath = requireChromium();
  await build({
    root,
    logLevel: 'warn',
    build: { outDir: join(root, 'dist-webgpu'), emptyOutDir: true },
  });
  ({ server, url } = await serveStatic(join(root, 'dist-webgpu')));
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--enable-unsafe-webgpu'],
  });
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe('the playground on WebGPU in headless Chromium', () => {
  it("trains on the browser's own WebGPU adapter", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    await page.goto(`${url}?backend=webgpu&allowSoftware=1&envs=2&steps=4&seed=1`);
    expect(await page.evaluate(() => 'gpu' in navigator)).toBe(true);
    // One iteration runs every kernel the page trains with (rollout, then the update's backward
    // passes and optimiser steps); a second would only run them again, at half a minute each on
    // this software adapter.
    await page.click('#step');
    await page.waitForFunction(
      () => Number(document.getElementById('iteration')?.textContent) === 1,
      undefined,
      { timeout: 600_000, polling: 500 },
    );
    await page.waitForFunction(
      () => !(document.getElementById('step') as HTMLButtonElement).disabled,
    );
    expect(await page.locator('#backend-info').innerText()).toMatch(
      /^webgpu on google swiftshader.*software/,
    );
    expect(await page.locator('#last-metrics').innerText()).toMatch(
      /entropy \d\.\d{3} · approx KL -?\d\.\d{4}/,
    );
    expect(await page.locator('#credit svg rect').count()).toBeGreaterThan(3);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('without ?allowSoftware=1 refuses the software adapter and says why', async () => {
    const page = await browser.newPage();
    await page.goto(`${url}?backend=webgpu&envs=2&steps=4`);
    await page.click('#step');
    await page.waitForFunction(
      () => document.getElementById('message')?.classList.contains('error'),
      undefined,
      {
        timeout: 120_000,
      },
    );
    expect(await page.locator('#message').innerText()).toMatch(/only a software adapter was found/);
    await page.close();
  });
});
