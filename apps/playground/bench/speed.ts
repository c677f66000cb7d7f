// Iterations per second of the playground's training in Chromium (wasm) against the same code in
// Node on wasm without the native kernels, on this machine, in one run.
//
//   npm run bench -w @poad/playground -- [--iterations 6] [--envs 8] [--steps 16] [--seed 1]
//
// Both sides run Session (src/session.ts) with the same settings and model bytes on a single
// wasm thread; the first iteration is a warm-up and the median of the rest is compared.

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

process.env.POAD_NATIVE_KERNELS = '0';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '6' },
    envs: { type: 'string', default: '8' },
    steps: { type: 'string', default: '16' },
    seed: { type: 'string', default: '1' },
  },
});
const N = Number(values.iterations);
const settings = {
  env: 'virtualhome' as const,
  task: 'food-preparation',
  algo: 'poad' as const,
  seed: Number(values.seed),
  envs: Number(values.envs),
  numSteps: Number(values.steps),
};
const root = new URL('..', import.meta.url).pathname;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Seconds of each iteration from the cumulative wall-clock column of the metrics rows. */
function perIteration(rows: { wallSeconds: number }[]): number[] {
  return rows.map((r, i) => r.wallSeconds - (i > 0 ? rows[i - 1]!.wallSeconds : 0));
}

async function inNode(): Promise<{ seconds: number[]; first: Record<string, unknown> }> {
  const { nodeSession } = await import('../test/node-session.js');
  const { session, backend } = await nodeSession(settings);
  for (let i = 0; i < N; i++) await session.iterate();
  const rows = session.metrics as unknown as { wallSeconds: number }[];
  console.log(`node: ${backend}, ${N} iterations`);
  session.dispose();
  return { seconds: perIteration(rows), first: session.metrics[0]! };
}

async function inChromium(): Promise<{
  seconds: number[];
  first: Record<string, unknown>;
  backend: string;
}> {
  const { chromium } = await import('playwright-core');
  const { build } = await import('vite');
  const { requireChromium } = await import('../test/chromium.js');
  const { serveStatic } = await import('../test/serve.js');
  await build({ root, logLevel: 'warn' });
  const { server, url } = await serveStatic(join(root, 'dist'));
  const browser = await chromium.launch({
    executablePath: requireChromium(),
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage({ acceptDownloads: true });
    const q = new URLSearchParams({
      ...Object.fromEntries(
        Object.entries(settings).map(([k, v]) => [k === 'numSteps' ? 'steps' : k, String(v)]),
      ),
      backend: 'wasm',
      threads: '1',
    });
    await page.goto(`${url}?${q}`);
    await page.click('#train');
    await page.waitForFunction(
      (n) => Number(document.getElementById('iteration')?.textContent) >= n,
      N,
      {
        timeout: 3_600_000,
        polling: 1000,
      },
    );
    await page.click('#pause');
    await page.waitForFunction(
      () => !(document.getElementById('train') as HTMLButtonElement).disabled,
    );
    const backend = await page.locator('#backend-info').innerText();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-run'),
    ]);
    const { readZip } = await import('../src/zip.js');
    const zipPath = join(root, 'test-artifacts', 'bench-run.zip');
    await download.saveAs(zipPath);
    const run = JSON.parse(
      new TextDecoder().decode(
        readZip(new Uint8Array(readFileSync(zipPath))).get('playground.json'),
      ),
    ) as { metrics: { wallSeconds: number }[] };
    const rows = run.metrics.slice(0, N);
    console.log(`chromium: ${backend}, ${rows.length} iterations`);
    return {
      seconds: perIteration(rows),
      first: run.metrics[0] as unknown as Record<string, unknown>,
      backend,
    };
  } finally {
    await browser.close();
    server.close();
  }
}

const load = loadavg()[0]!.toFixed(2);
console.log(
  `VirtualHome food-preparation, POAD, seed ${settings.seed}, ${settings.envs} envs × ${settings.numSteps} steps per iteration; ${cpus().length} cores, load ${load} at start`,
);
const node = await inNode();
const web = await inChromium();
const nodeMed = median(node.seconds.slice(1));
const webMed = median(web.seconds.slice(1));
console.log('\n| | median s / iteration (iterations 2…N) | iterations / s |');
console.log('|---|---|---|');
console.log(
  `| Node 20, tfjs wasm, 1 thread, no native kernels | ${nodeMed.toFixed(2)} | ${(1 / nodeMed).toFixed(3)} |`,
);
console.log(
  `| Chromium ${'(headless)'}, ${web.backend} | ${webMed.toFixed(2)} | ${(1 / webMed).toFixed(3)} |`,
);
console.log(
  `\nChromium / Node time ratio: ${(webMed / nodeMed).toFixed(2)} (load ${loadavg()[0]!.toFixed(2)} at end)`,
);
const keys = ['policyLoss', 'valueLoss', 'entropy', 'approxKl', 'meanReward'];
console.log(
  `first iteration, Node:     ${keys.map((k) => `${k} ${node.first[k]}`).join(', ')}\nfirst iteration, Chromium: ${keys.map((k) => `${k} ${web.first[k]}`).join(', ')}`,
);
