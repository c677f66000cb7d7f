import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '@poad/hf-files';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import {
  loadAdapter,
  loadCausalLM,
  loadValueHead,
  readAdapter,
  saveAdapter,
  saveCausalLM,
  saveValueHead,
} from '../src/checkpoint.js';
import { LoraAdapter } from '../src/lora.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, tempDir, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

function bitsEqual(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.every((v, i) => v === y[i]);
}

describe('save and load', () => {
  it('a second adapter is saved with { adapter } and read back without being attached', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 5, lora: { r: 4, alpha: 8 } });
    const second = LoraAdapter.create(model.config, { r: 4, alpha: 8 }, 9);
    for (const v of second.variables()) v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 4));
    const dir = await tempDir();
    await saveAdapter(model, join(dir, 'second'), { adapter: second });
    const attached = model.adapter;
    const read = await readAdapter(model, join(dir, 'second'));
    expect(model.adapter).toBe(attached);
    const [va, vb] = [second.variables(), read.variables()];
    expect(vb.length).toBe(va.length);
    va.forEach((v, i) => {
      expect(bitsEqual(v.dataSync() as Float32Array, vb[i]!.dataSync() as Float32Array)).toBe(true);
    });
    // The attached adapter's own file differs (saved without the option).
    await saveAdapter(model, join(dir, 'own'));
    const own = await readAdapter(model, join(dir, 'own'));
    expect(
      bitsEqual(own.variables()[1]!.dataSync() as Float32Array, vb[1]!.dataSync() as Float32Array),
    ).toBe(false);
    for (const x of [second, read, own]) x.dispose();
    model.dispose();
  });

  it('model, adapter and value head round-trip bit-exactly', async () => {
    for (const cfg of [
      tinyConfig(),
      tinyConfig({ model_type: 'qwen2', tie_word_embeddings: true }),
    ]) {
      const model = createCausalLM(cfg, {
        seed: 21,
        lora: { targetModules: ['q_proj', 'v_proj', 'down_proj'], r: 4, alpha: 8 },
        valueHead: { hiddenSizes: [16, 8] },
      });
      for (const v of model.adapter?.variables() ?? [])
        v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 3));
      const dir = await tempDir();
      await saveCausalLM(model, dir);
      await saveAdapter(model, join(dir, 'adapter'));
      await saveValueHead(model, join(dir, 'adapter'));
      const loaded = await loadCausalLM(dir, {
        adapterDir: join(dir, 'adapter'),
        valueHeadDir: join(dir, 'adapter'),
      });
      const a = await model.exportWeights();
      const b = await loaded.exportWeights();
      expect([...b.keys()]).toEqual([...a.keys()]);
      for (const [k, t] of a)
        expect(bitsEqual(t.data, b.get(k)?.data as Float32Array), k).toBe(true);
      const va = model.adapter?.variables() ?? [];
      const vb = loaded.adapter?.variables() ?? [];
      expect(vb.length).toBe(va.length);
      va.forEach((v, i) => {
        expect(bitsEqual(v.dataSync() as Float32Array, vb[i]?.dataSync() as Float32Array)).toBe(
          true,
        );
      });
      expect(loaded.adapter?.config.targetModules).toEqual(['q_proj', 'v_proj', 'down_proj']);
      expect(loaded.adapter?.scale).toBe(2);
      const ha = await model.valueHead?.toHost();
      const hb = await loaded.valueHead?.toHost();
      for (const [k, t] of ha ?? [])
        expect(bitsEqual(t.data, hb?.get(k)?.data as Float32Array)).toBe(true);
      const ids = [randomIds(new SeededRng(1), 7, 61)];
      expect(bitsEqual(await model.logits(ids), await loaded.logits(ids))).toBe(true);
      const cfgJson = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
      expect(cfgJson.model_type).toBe(cfg.model_type);
      model.dispose();
      loaded.dispose();
    }
  });

  it('a merged save equals the adapted model', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 22, lora: true, initStd: 0.2 });
    for (const v of model.adapter?.variables() ?? [])
      v.assign(tf.randomNormal(v.shape, 0, 0.2, 'float32', 4));
    const dir = await tempDir();
    await saveCausalLM(model, dir, { merged: true });
    const merged = await loadCausalLM(dir);
    const ids = [randomIds(new SeededRng(2), 8, 61)];
    const adapted = await model.logits(ids);
    expect(maxAbsDiff(await merged.logits(ids), adapted)).toBeLessThan(1e-4);
    expect(maxAbsDiff(await model.logits(ids, { adapter: false }), adapted)).toBeGreaterThan(1e-3);
    model.dispose();
    merged.dispose();
  });

  it('bad files give typed errors naming the file and tensor', async () => {
    const model = createCausalLM(tinyConfig(), {
      seed: 23,
      lora: true,
      valueHead: { hiddenSizes: [8] },
    });
    const dir = await tempDir();
    await expect(loadCausalLM(join(dir, 'nope'))).rejects.toBeInstanceOf(CheckpointError);
    await saveCausalLM(model, dir);
    // Unknown model type.
    const cfgPath = join(dir, 'config.json');
    const cfg = JSON.parse(await readFile(cfgPath, 'utf8'));
    await writeFile(cfgPath, JSON.stringify({ ...cfg, model_type: 'gpt2' }));
    await expect(loadCausalLM(dir)).rejects.toMatchObject({ code: 'unknown_model_type' });
    // Shape mismatch between config and weights.
    await writeFile(cfgPath, JSON.stringify({ ...cfg, intermediate_size: 50 }));
    const err = await loadCausalLM(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as CheckpointError).tensor).toMatch(/mlp\.(gate|up|down)_proj\.weight/);
    expect((err as Error).message).toContain('model.safetensors');
    await writeFile(cfgPath, JSON.stringify(cfg));
    // Truncated weights.
    const wPath = join(dir, 'model.safetensors');
    const bytes = await readFile(wPath);
    await writeFile(wPath, bytes.subarray(0, bytes.length - 10));
    await expect(loadCausalLM(dir)).rejects.toMatchObject({ code: 'truncated' });
    // Value head with a wrong input width.
    const other = createCausalLM(
      tinyConfig({ hidden_size: 16, num_attention_heads: 2, num_key_value_heads: 1 }),
      {
        valueHead: { hiddenSizes: [8] },
      },
    );
    await saveValueHead(other, join(dir, 'vh'));
    const vhErr = await loadValueHead(model, join(dir, 'vh')).catch((e: unknown) => e);
    expect(vhErr).toBeInstanceOf(CheckpointError);
    expect((vhErr as CheckpointError).tensor).toBe('v_head.0.weight');
    // Adapter for a different base.
    other.addLora();
    await saveAdapter(other, join(dir, 'ad'));
    await expect(loadAdapter(model, join(dir, 'ad'))).rejects.toBeInstanceOf(CheckpointError);
    await rm(join(dir, 'ad', 'adapter_model.safetensors'));
    await expect(loadAdapter(model, join(dir, 'ad'))).rejects.toMatchObject({
      code: 'missing_file',
    });
    model.dispose();
    other.dispose();
  });
});
