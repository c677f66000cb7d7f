/**
 * How a run chooses its frozen float32 products on webgpu (`chooseProducts`): fixed choices, TF.js
 * on a software adapter, and on a GPU the resumed run's plan, the machine's cached plan, or a new
 * measurement that it caches. The GPU cases run on lavapipe with the adapter declared hardware.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CausalLM, createCausalLM } from '@poad/lora-model';
import { initBackend, type ProductPlan, releaseBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chooseProducts, productCacheFile } from '../src/agent/products.js';
import { train } from '../src/index.js';
import { DoorEnv } from './door-env.js';
import { tinyModelDir } from './tiny-model.js';

vi.setConfig({ testTimeout: 180_000 });

const gpu = await initBackend('webgpu', { allowSoftwareAdapter: true }).then(
  () => ({ ok: true as const }),
  (e: Error) => ({ ok: false as const, reason: e.message }),
);

afterAll(async () => {
  await releaseBackend();
});

function tiny(weightDtype: 'float32' | 'bfloat16' = 'float32'): CausalLM {
  return createCausalLM(
    {
      model_type: 'llama',
      vocab_size: 64,
      hidden_size: 32,
      intermediate_size: 48,
      num_hidden_layers: 1,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      rms_norm_eps: 1e-5,
      rope_theta: 10000,
      tie_word_embeddings: true,
    },
    { seed: 1, lora: true, weightDtype },
  );
}

const GPU = { description: 'webgpu on test gpu', software: false };
const TUNE = { rows: [4], reps: 1 };

describe.runIf(gpu.ok || process.env.CI)('chooseProducts', () => {
  it('is available under CI', () => {
    expect(gpu.ok, gpu.ok ? '' : gpu.reason).toBe(true);
  });

  it('takes tfjs and tiled as they are, keeps TF.js on a software adapter, and needs nothing for 16-bit weights', async () => {
    const model = tiny();
    for (const matmul of ['tfjs', 'tiled'] as const) {
      const r = await chooseProducts(model, { matmul, adapter: GPU, cacheDir: false });
      expect(r).toEqual({ choice: matmul, source: 'fixed' });
      expect(model.products).toBe(matmul);
    }
    model.useProducts('tfjs');
    const soft = await chooseProducts(model, {
      matmul: 'auto',
      adapter: { description: 'webgpu on lavapipe', software: true },
      cacheDir: false,
    });
    expect(soft).toEqual({ choice: 'tfjs', source: 'software adapter' });
    model.dispose();
    const packed = tiny('bfloat16');
    expect(packed.frozenProducts()).toEqual([]);
    expect(await chooseProducts(packed, { matmul: 'tiled', adapter: GPU })).toEqual({
      choice: 'tfjs',
      source: 'none',
    });
    packed.dispose();
  });

  it('on a GPU: measures once and caches per adapter and shapes; a resumed run keeps its own plan', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'poad-products-'));
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    const model = tiny();
    const before = tf.memory().numTensors;
    const first = await chooseProducts(model, {
      matmul: 'auto',
      adapter: GPU,
      cacheDir,
      tune: TUNE,
      log,
    });
    expect(first.source).toBe('tuned');
    const plan = first.choice as ProductPlan;
    // q|k|v, o, gate|up, down and the tied head, both forms, one row count.
    expect(plan.timings.length).toBe(10);
    expect(plan.adapter).toBe(GPU.description);
    expect(model.products).toBe(plan);
    expect(
      lines.some((l) =>
        /timing TF\.js's matmul against the tiled program for 10 product forms/.test(l),
      ),
    ).toBe(true);
    const file = productCacheFile(cacheDir, model, GPU.description, TUNE);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(plan);

    // The same shapes on the same adapter: the cached plan, not a new measurement.
    const again = await chooseProducts(model, {
      matmul: 'auto',
      adapter: GPU,
      cacheDir,
      tune: TUNE,
      log,
    });
    expect(again.source).toBe('cache');
    expect(again.choice).toEqual(plan);
    // Another adapter: its own measurement and cache file.
    const other = { description: 'webgpu on another gpu', software: false };
    const measured = await chooseProducts(model, {
      matmul: 'auto',
      adapter: other,
      cacheDir,
      tune: TUNE,
    });
    expect(measured.source).toBe('tuned');
    expect(readdirSync(cacheDir).length).toBe(2);

    // A resumed run: its recorded plan wins over the cache when measured on this adapter.
    const recorded: ProductPlan = {
      ...plan,
      timings: plan.timings.map((t) => ({ ...t, tiled: !t.tiled })),
    };
    const resumed = await chooseProducts(model, {
      matmul: 'auto',
      adapter: GPU,
      cacheDir,
      recorded: JSON.parse(JSON.stringify(recorded)),
      log,
    });
    expect(resumed).toEqual({ choice: recorded, source: 'run' });
    // Recorded on another adapter: this machine's plan instead, saying why.
    const moved = await chooseProducts(model, {
      matmul: 'auto',
      adapter: GPU,
      cacheDir,
      recorded: { ...recorded, adapter: 'webgpu on the first machine' },
      tune: TUNE,
      log,
    });
    expect(moved).toEqual({ choice: plan, source: 'cache' });
    expect(
      lines.some((l) =>
        /measured on webgpu on the first machine, this is webgpu on test gpu/.test(l),
      ),
    ).toBe(true);
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });

  it('a damaged cache file or recorded plan is measured again with a warning, and the cache rewritten', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'poad-products-'));
    const model = tiny();
    const file = productCacheFile(cacheDir, model, GPU.description, TUNE);
    writeFileSync(file, JSON.stringify({ version: 1, adapter: GPU.description, timings: 'none' }));
    const lines: string[] = [];
    const r = await chooseProducts(model, {
      matmul: 'auto',
      adapter: GPU,
      cacheDir,
      recorded: { version: 7 },
      tune: TUNE,
      log: (l) => lines.push(l),
    });
    expect(r.source).toBe('tuned');
    expect(lines.filter((l) => /^warning: .*not a product plan/.test(l)).length).toBe(2);
    expect(existsSync(file)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(r.choice);
    model.dispose();
  });

  it('the matmul option reaches the model through train(), and environment.json records the choice', async () => {
    process.env.POAD_WEBGPU_ALLOW_SOFTWARE = '1';
    const model = await tinyModelDir();
    const runs = mkdtempSync(join(tmpdir(), 'poad-products-run-'));
    const r = await train({
      model,
      env: (i: number) => new DoorEnv(i),
      envName: 'doors',
      backend: 'webgpu',
      matmul: 'tiled',
      maxIterations: 1,
      envs: 2,
      numSteps: 4,
      numMinibatches: 2,
      evalEpisodes: 0,
      perplexityLines: 0,
      quiet: true,
      runs,
      log: () => {},
    });
    const env = JSON.parse(readFileSync(join(r.runDir, 'environment.json'), 'utf8'));
    expect(env.model).toMatchObject({ products: 'tiled', productsFrom: 'fixed' });
    expect(JSON.parse(readFileSync(join(r.runDir, 'config.json'), 'utf8')).matmul).toBe('tiled');
  });
});
