import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultModelPath } from '@poad/default-model';
import { expectBrowserBundle } from '@poad/dev-kit';
import { CheckpointError, parseSafetensors } from '@poad/hf-files';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import { loadCausalLM, saveAdapter, saveValueHead } from '../src/checkpoint.js';
import { tempDir, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

/** A fetch over the files of a folder, as a static server gives them (404 when missing). */
function folderFetch(dir: string, seen: string[] = []): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input);
    seen.push(url);
    const name = url.replace(/^https:\/\/models\.test\/default\//, '');
    try {
      return new Response(await readFile(join(dir, name)), { status: 200 });
    } catch {
      return new Response('not found', { status: 404, statusText: 'Not Found' });
    }
  }) as typeof fetch;
}

async function logits(model: browser.CausalLM, ids: number[]): Promise<Float32Array> {
  const t = tf.tidy(() => {
    const out = model.forward({ ids: Int32Array.from(ids), batch: 1, seq: ids.length });
    return model.head(out.hidden);
  });
  const data = (await t.data()) as Float32Array;
  t.dispose();
  return data;
}

describe('the browser entry', () => {
  it('loads a model folder over fetch: same tokenizer ids and logits as loadCausalLM from disk', async () => {
    const seen: string[] = [];
    const fromUrl = await browser.loadCausalLM('https://models.test/default', {
      fetch: folderFetch(defaultModelPath, seen),
      seed: 3,
      lora: { r: 4, alpha: 8 },
      valueHead: true,
    });
    const fromDisk = await loadCausalLM(defaultModelPath, { seed: 3, lora: { r: 4, alpha: 8 } });
    expect(seen.sort()).toEqual(
      ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map(
        (f) => `https://models.test/default/${f}`,
      ),
    );
    const text = 'You are in the kitchen. Action: open the fridge';
    const ids = await fromUrl.tokenizer!.encode(text, { addSpecialTokens: false });
    expect(ids).toEqual(await fromDisk.tokenizer!.encode(text, { addSpecialTokens: false }));
    const [a, b] = [await logits(fromUrl, ids), await logits(fromDisk, ids)];
    expect(a.length).toBe(ids.length * fromUrl.config.vocabSize);
    expect(Array.from(a)).toEqual(Array.from(b));
    // The adapter and value head as bytes are the files saveAdapter/saveValueHead write.
    const dir = await tempDir();
    await saveAdapter(fromUrl, dir);
    await saveValueHead(fromUrl, dir);
    const files = await browser.adapterFiles(fromUrl);
    expect(files['adapter_config.json']).toBe(
      await readFile(join(dir, 'adapter_config.json'), 'utf8'),
    );
    expect(
      parseSafetensors(files['adapter_model.safetensors'] as Uint8Array).tensors.size,
    ).toBeGreaterThan(0);
    expect(Buffer.from(files['adapter_model.safetensors'] as Uint8Array)).toEqual(
      await readFile(join(dir, 'adapter_model.safetensors')),
    );
    expect(Buffer.from(await browser.valueHeadFile(fromUrl))).toEqual(
      await readFile(join(dir, browser.VALUE_HEAD_FILE)),
    );
    fromUrl.dispose();
    fromDisk.dispose();
  }, 120_000);

  it('names the URL of a file it cannot fetch, and checks the contents as loadCausalLM does', async () => {
    const err = await browser
      .loadCausalLM('https://models.test/default/missing', { fetch: folderFetch('/nonexistent') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as Error).message).toMatch(
      /https:\/\/models\.test\/default\/missing\/config\.json/,
    );
    expect((err as Error).message).toMatch(/HTTP 404/);
    const config = await readFile(join(defaultModelPath, 'config.json'), 'utf8');
    expect(() =>
      browser.causalLMFromFiles({
        config,
        weights: new Uint8Array([1, 2, 3]),
        source: 'https://x.test/m',
      }),
    ).toThrow(/https:\/\/x\.test\/m\/model\.safetensors/);
  });

  it('bundles for a browser without any Node built-in', async () => {
    const code = await expectBrowserBundle(join(import.meta.dirname, '../src/browser.ts'), [
      '@tensorflow/tfjs-backend-webgpu',
      '@tensorflow/tfjs-backend-wasm',
    ]);
    expect(code.length).toBeGreaterThan(10_000);
  });
});
