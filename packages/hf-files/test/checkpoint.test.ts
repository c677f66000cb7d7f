import { mkdir, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCheckpoint, writeCheckpoint } from '../src/checkpoint.js';
import { serializeSafetensors } from '../src/safetensors-write.js';
import { f32Bits, randomTensors, rejectionOf, tinyConfig, withTempDir } from './test-helpers.js';

const tokenizerJson = (ids: number) =>
  JSON.stringify({
    model: {
      type: 'BPE',
      vocab: Object.fromEntries([...Array(ids).keys()].map((i) => [`t${i}`, i])),
      merges: [],
    },
    added_tokens: [],
  });

describe('writeCheckpoint → readCheckpoint', () => {
  it('round-trips a single-file checkpoint bit-exactly, with tokenizer', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig({ model_type: 'qwen2', bos_token_id: 1, custom_field: 'kept' });
      const tensors = randomTensors(config, 5);
      await writeCheckpoint(dir, config, tensors, { tokenizerJson: tokenizerJson(30) });
      expect((await readdir(dir)).sort()).toEqual([
        'config.json',
        'model.safetensors',
        'tokenizer.json',
      ]);
      const back = await readCheckpoint(dir);
      expect(back.config).toEqual({ ...config, torch_dtype: 'float32' });
      expect(back.tokenizerJson).toBe(tokenizerJson(30));
      expect(back.unexpectedTensors).toEqual([]);
      expect([...back.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
      for (const [name, t] of tensors) {
        expect(back.tensors.get(name)!.shape).toEqual(t.shape);
        expect(f32Bits(back.tensors.get(name)!.data)).toEqual(f32Bits(t.data));
      }
      const onDisk = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
      expect(onDisk).toMatchObject({
        model_type: 'qwen2',
        custom_field: 'kept',
        torch_dtype: 'float32',
      });
    });
  });

  it('shards above maxShardBytes, writes the index, and switches layouts cleanly', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig();
      const tensors = randomTensors(config, 6);
      await writeCheckpoint(dir, config, tensors, { maxShardBytes: 1500 });
      const files = (await readdir(dir)).sort();
      const shards = files.filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f));
      expect(shards.length).toBeGreaterThan(2);
      expect(
        shards.every((s) =>
          s.endsWith(`-of-${String(shards.length).padStart(5, '0')}.safetensors`),
        ),
      ).toBe(true);
      expect(files).not.toContain('model.safetensors');
      const index = JSON.parse(await readFile(join(dir, 'model.safetensors.index.json'), 'utf8'));
      const total = [...tensors.values()].reduce((s, t) => s + t.data.length * 4, 0);
      expect(index.metadata.total_size).toBe(total);
      expect(Object.keys(index.weight_map).sort()).toEqual([...tensors.keys()].sort());
      const back = await readCheckpoint(dir);
      for (const [name, t] of tensors)
        expect(f32Bits(back.tensors.get(name)!.data)).toEqual(f32Bits(t.data));

      // Saving again as one file removes the index and every shard.
      await writeCheckpoint(dir, config, tensors);
      expect((await readdir(dir)).sort()).toEqual(['config.json', 'model.safetensors']);
      expect((await readCheckpoint(dir)).tensors.size).toBe(tensors.size);
    });
  });

  it('writes F16/BF16 on request and reads them back as float32', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig();
      await writeCheckpoint(dir, config, randomTensors(config, 7), { storeAs: 'BF16' });
      const back = await readCheckpoint(dir);
      expect(back.config.torch_dtype).toBe('bfloat16');
      expect(back.tensors.get('model.norm.weight')!.dtype).toBe('BF16');
    });
  });

  it('drops lm_head.weight for a tied head', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig({ tie_word_embeddings: true });
      const tensors = randomTensors(config, 8);
      const embed = tensors.get('model.embed_tokens.weight')!;
      tensors.set('lm_head.weight', { shape: embed.shape, data: embed.data });
      await writeCheckpoint(dir, config, tensors);
      expect((await readCheckpoint(dir)).tensors.has('lm_head.weight')).toBe(false);
    });
  });

  it('refuses to write an invalid checkpoint and leaves the old one intact', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig();
      const tensors = randomTensors(config, 9);
      await writeCheckpoint(dir, config, tensors);
      const before = await readFile(join(dir, 'model.safetensors'));
      const broken = new Map(tensors);
      broken.delete('model.norm.weight');
      const e = await rejectionOf(writeCheckpoint(dir, config, broken));
      expect(e).toMatchObject({ code: 'missing_tensor', tensor: 'model.norm.weight' });
      const e2 = await rejectionOf(
        writeCheckpoint(dir, config, tensors, { tokenizerJson: tokenizerJson(33) }),
      );
      expect(e2.code).toBe('vocab_mismatch');
      expect(await readFile(join(dir, 'model.safetensors'))).toEqual(before);
      expect((await readdir(dir)).sort()).toEqual(['config.json', 'model.safetensors']);
    });
  });
});

describe('readCheckpoint errors name the file and tensor', () => {
  async function saved(dir: string) {
    const config = tinyConfig();
    await writeCheckpoint(dir, config, randomTensors(config, 10), { maxShardBytes: 1500 });
    return config;
  }

  it('missing folder, config or weights', async () => {
    await withTempDir(async (dir) => {
      let e = await rejectionOf(readCheckpoint(join(dir, 'nope')));
      expect(e).toMatchObject({ code: 'missing_file', file: join(dir, 'nope', 'config.json') });
      await writeFile(join(dir, 'config.json'), JSON.stringify(tinyConfig()));
      await writeFile(join(dir, 'pytorch_model.bin'), 'x');
      e = await rejectionOf(readCheckpoint(dir));
      expect(e).toMatchObject({ code: 'missing_file', file: join(dir, 'model.safetensors') });
      expect(e.message).toContain('pytorch_model.bin');
    });
  });

  it('unknown model_type and malformed config.json', async () => {
    await withTempDir(async (dir) => {
      await saved(dir);
      const path = join(dir, 'config.json');
      await writeFile(path, JSON.stringify({ ...tinyConfig(), model_type: 'gpt_neox' }));
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'unknown_model_type',
        file: path,
      });
      await writeFile(path, '{not json');
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'invalid_config',
        file: path,
      });
    });
  });

  it('a vocab_size that disagrees with the embedding or the tokenizer', async () => {
    await withTempDir(async (dir) => {
      const config = await saved(dir);
      await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, vocab_size: 48 }));
      const e = await rejectionOf(readCheckpoint(dir));
      expect(e).toMatchObject({ code: 'vocab_mismatch', tensor: 'model.embed_tokens.weight' });
      expect(e.file).toMatch(/model-\d{5}-of-\d{5}\.safetensors$/);
      await writeFile(join(dir, 'config.json'), JSON.stringify(config));
      await writeFile(join(dir, 'tokenizer.json'), tokenizerJson(40));
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'vocab_mismatch',
        file: join(dir, 'tokenizer.json'),
      });
    });
  });

  it('a shape that disagrees with config.json', async () => {
    await withTempDir(async (dir) => {
      const config = await saved(dir);
      await writeFile(
        join(dir, 'config.json'),
        JSON.stringify({ ...config, intermediate_size: 16 }),
      );
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'shape_mismatch',
        tensor: 'model.layers.0.mlp.gate_proj.weight',
      });
    });
  });

  it('a truncated shard, a missing shard and a tensor absent from its shard', async () => {
    await withTempDir(async (dir) => {
      await saved(dir);
      const index = JSON.parse(await readFile(join(dir, 'model.safetensors.index.json'), 'utf8'));
      const shard = index.weight_map['model.layers.1.mlp.up_proj.weight'] as string;
      const path = join(dir, shard);
      const bytes = await readFile(path);
      await truncate(path, bytes.length - 3);
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'truncated',
        file: path,
      });
      await rm(path);
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'missing_file',
        file: path,
      });
      await writeFile(path, serializeSafetensors({}));
      const e = await rejectionOf(readCheckpoint(dir));
      expect(e.code).toBe('missing_tensor');
      expect(e.file).toBe(path);
      expect(index.weight_map[e.tensor!]).toBe(shard);
    });
  });

  it('an index that points outside the folder', async () => {
    await withTempDir(async (dir) => {
      await saved(dir);
      await mkdir(join(dir, 'sub'));
      const indexPath = join(dir, 'model.safetensors.index.json');
      for (const target of [
        '../model-00001-of-00002.safetensors',
        'sub/x.safetensors',
        'x.bin',
        7,
      ]) {
        await writeFile(indexPath, JSON.stringify({ weight_map: { 'model.norm.weight': target } }));
        expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
          code: 'invalid_config',
          file: indexPath,
        });
      }
      await writeFile(indexPath, JSON.stringify({ metadata: {} }));
      expect(await rejectionOf(readCheckpoint(dir))).toMatchObject({
        code: 'invalid_config',
        file: indexPath,
      });
    });
  });

  it('the same tensor in two shards', async () => {
    await withTempDir(async (dir) => {
      const config = tinyConfig();
      const tensors = randomTensors(config, 11);
      await writeCheckpoint(dir, config, tensors, { maxShardBytes: 1500 });
      const index = JSON.parse(await readFile(join(dir, 'model.safetensors.index.json'), 'utf8'));
      const map = index.weight_map as Record<string, string>;
      const other = Object.values(map).find((s) => s !== map['model.norm.weight'])!;
      const own = Object.keys(map).filter((n) => map[n] === other);
      const copy = new Map(own.map((n) => [n, tensors.get(n)!]));
      copy.set('model.norm.weight', tensors.get('model.norm.weight')!);
      await writeFile(join(dir, other), serializeSafetensors(copy));
      const e = await rejectionOf(readCheckpoint(dir));
      expect(e).toMatchObject({ code: 'corrupt', tensor: 'model.norm.weight' });
      expect(e.message).toContain('also appears');
    });
  });
});
