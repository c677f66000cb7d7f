import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../src/session.js';
import { readZip } from '../src/zip.js';
import { requireChromium } from './chromium.js';
import { nodeSession } from './node-session.js';
import { serveStatic } from './serve.js';

// The built site in Debian's headless Chromium: trains on wasm, shows the curve, the token
// credit and an episode, saves a run and loads it back, with no console errors. The screenshot
// is kept in test-artifacts/.

const root = new URL('..', import.meta.url).pathname;
const artifacts = join(root, 'test-artifacts');
const ITERATIONS = 5;

let server: Server;
let url: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

const text = (id: string) => page.locator(`#${id}`).innerText();
const iteration = async () => Number(await text('iteration'));
const curvePoints = () =>
  page.evaluate(() => {
    const svg = document.querySelector('#curve svg');
    if (!svg) return 0;
    let n = svg.querySelectorAll('circle').length;
    for (const p of svg.querySelectorAll('polyline')) {
      n += (p.getAttribute('points') ?? '').trim().split(/\s+/).filter(Boolean).length;
    }
    return n;
  });

/** `n` iterations of the same session in this Node process (see node-session.ts). */
async function trainInNode(
  settings: Parameters<typeof Session.create>[0],
  n: number,
): Promise<Record<string, unknown>[]> {
  const { session } = await nodeSession(settings);
  try {
    for (let i = 0; i < n; i++) await session.iterate();
    return session.metrics;
  } finally {
    session.dispose();
  }
}

beforeAll(async () => {
  const executablePath = requireChromium();
  await build({ root, logLevel: 'warn', build: { outDir: join(root, 'dist'), emptyOutDir: true } });
  ({ server, url } = await serveStatic(join(root, 'dist')));
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  page = await browser.newPage({ acceptDownloads: true, viewport: { width: 1400, height: 1300 } });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) consoleErrors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  mkdirSync(artifacts, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe('the playground page in headless Chromium', () => {
  it(`trains ${ITERATIONS} iterations on wasm and shows the curve, the token credit and an episode`, async () => {
    // Half the preset rollout (4 × 16 instead of 8 × 16) keeps the test short on 2 cores; the
    // first episodes end (or hit the step limit) within the 5 iterations.
    await page.goto(
      `${url}?env=virtualhome&task=food-preparation&algo=poad&seed=1&backend=wasm&threads=1&envs=4&steps=16`,
    );
    expect(await page.locator('#algo').inputValue()).toBe('poad');
    await page.click('#train');
    await page.waitForFunction(
      (n) => Number(document.getElementById('iteration')?.textContent) >= n,
      ITERATIONS,
      { timeout: 600_000, polling: 500 },
    );
    await page.click('#pause');
    await page.waitForFunction(
      () => !(document.getElementById('train') as HTMLButtonElement).disabled,
      undefined,
      {
        timeout: 300_000,
      },
    );
    const done = await iteration();
    expect(done).toBeGreaterThanOrEqual(ITERATIONS);

    const backend = await text('backend-info');
    expect(backend).toMatch(/^wasm \((SIMD|no SIMD), \d+ threads?\)/);
    // The server sends COOP/COEP, so the page is cross-origin isolated and wasm may use threads:
    // this test asks for one (threads=1, to compare with Node bit for bit), and the page says why
    // it runs one.
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    expect(backend).toMatch(/1 thread\) — one thread: one thread was asked for$/);

    // The learning curve has points (a polyline per series; a circle for a single point).
    const points = await curvePoints();
    expect(points).toBeGreaterThan(0);
    expect(await page.locator('#curve svg').innerHTML()).toMatch(/episodic return/);
    // The token-credit view shows tokens of actions and their credit.
    const creditTexts = await page.locator('#credit svg text').allTextContents();
    expect(creditTexts.join(' ')).toMatch(/Per-token advantages, iteration \d+ \(token level\)/);
    expect(creditTexts.some((t) => /^-?\d+\.\d{3}$/.test(t.trim()))).toBe(true);
    expect(await page.locator('#credit svg rect').count()).toBeGreaterThan(3);
    expect(await text('last-metrics')).toMatch(/entropy \d\.\d{3} · approx KL -?\d\.\d{4}/);

    await page.click('#play-greedy');
    await page.waitForSelector('#episode table.episode tr', { timeout: 120_000 });
    expect(await page.locator('#episode .action').count()).toBeGreaterThan(1);
    expect(await page.locator('#episode .action.chosen').count()).toBeGreaterThan(0);

    writeFileSync(join(artifacts, 'playground.png'), await page.screenshot({ fullPage: true }));
    expect(consoleErrors).toEqual([]);
  });

  it('saves the run (metrics, PEFT adapter, trainer state) and continues it after loading it back', async () => {
    const before = await iteration();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-run'),
    ]);
    const zipPath = join(artifacts, download.suggestedFilename());
    await download.saveAs(zipPath);
    const files = readZip(new Uint8Array(readFileSync(zipPath)));
    expect([...files.keys()].sort()).toEqual([
      'adapter/adapter_config.json',
      'adapter/adapter_model.safetensors',
      'adapter/value_head.safetensors',
      'metrics.csv',
      'playground.json',
      'trainer.json',
      'trainer.safetensors',
    ]);
    const csv = new TextDecoder().decode(files.get('metrics.csv'));
    expect(csv.trim().split('\n')).toHaveLength(before + 1);
    // The page computed exactly what the same code computes in Node on wasm (same kernels, one
    // thread): the first two iterations' losses, entropy and KL agree to the last bit.
    const run = JSON.parse(new TextDecoder().decode(files.get('playground.json'))) as {
      settings: Parameters<typeof Session.create>[0];
      metrics: Record<string, unknown>[];
    };
    const nodeRows = await trainInNode(run.settings, 2);
    const KEYS = ['policyLoss', 'valueLoss', 'entropy', 'approxKl', 'clipFraction', 'meanReward'];
    const pick = (r: Record<string, unknown>) => KEYS.map((k) => [k, r[k]]);
    // Each compared value is a finite number on both sides (a renamed or missing key would be
    // undefined on both, and equal); the episodes' return is one too once an episode ended.
    for (const [side, rows] of [
      ['page', run.metrics.slice(0, 2)],
      ['Node', nodeRows],
    ] as const) {
      expect(rows, side).toHaveLength(2);
      for (const [i, row] of rows.entries()) {
        for (const [k, v] of pick(row)) {
          expect(Number.isFinite(v), `${side} iteration ${i + 1}: ${k} = ${v}`).toBe(true);
        }
        const ended = row.episodes;
        expect(Number.isInteger(ended), `${side} iteration ${i + 1}: episodes = ${ended}`).toBe(
          true,
        );
        if ((ended as number) > 0) expect(Number.isFinite(row.episodeReturn)).toBe(true);
        else expect(row.episodeReturn).toBeNull();
      }
    }
    const withEpisodes = (r: Record<string, unknown>) => [
      ...pick(r),
      ['episodes', r.episodes],
      ['episodeReturn', r.episodeReturn],
    ];
    expect(run.metrics.slice(0, 2).map(withEpisodes)).toEqual(nodeRows.map(withEpisodes));
    const adapter = JSON.parse(new TextDecoder().decode(files.get('adapter/adapter_config.json')));
    expect(adapter).toMatchObject({ peft_type: 'LORA', r: 8, lora_alpha: 16 });

    const [csvDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-csv'),
    ]);
    expect(csvDownload.suggestedFilename()).toMatch(/-metrics\.csv$/);

    await page.click('#reset');
    expect(await iteration()).toBe(0);
    await page.setInputFiles('#load-run', zipPath);
    await page.waitForFunction(
      (n) => Number(document.getElementById('iteration')?.textContent) === n,
      before,
      {
        timeout: 120_000,
      },
    );
    expect(await text('message')).toMatch(new RegExp(`run loaded at iteration ${before}`));
    await page.click('#step');
    await page.waitForFunction(
      (n) => Number(document.getElementById('iteration')?.textContent) === n + 1,
      before,
      {
        timeout: 300_000,
      },
    );
    expect(await curvePoints()).toBeGreaterThan(0);
    expect(consoleErrors).toEqual([]);
  });
});
