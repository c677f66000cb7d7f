import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import { saveAdapter, saveCausalLM } from '../src/checkpoint.js';
import type { HFModelConfig } from '../src/config.js';
import { SeededRng } from '../src/rng.js';
import { llama3Config, qwen3Config, tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, tempDir, useTestBackend } from './helpers.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'reference', 'llama_reference.py');

function torchAvailable(): boolean {
  const r = spawnSync(PYTHON, ['-c', 'import torch, numpy'], { encoding: 'utf8' });
  return r.status === 0;
}

const hasTorch = torchAvailable();
if (!hasTorch && process.env.CI) {
  throw new Error(
    `PyTorch parity needs ${PYTHON} with torch and numpy (Debian: apt-get install python3-torch); it is missing in CI`,
  );
}

const CASES: Array<[string, HFModelConfig]> = [
  ['llama, GQA, untied head', tinyConfig()],
  ['llama, tied head, MHA', tinyConfig({ tie_word_embeddings: true, num_key_value_heads: 4 })],
  [
    'qwen2, q/k/v bias, rope_theta 1e6, GQA 4:1',
    tinyConfig({ model_type: 'qwen2', rope_theta: 1_000_000, num_key_value_heads: 1 }),
  ],
  [
    'llama, attention_bias, explicit head_dim, tied',
    tinyConfig({ attention_bias: true, head_dim: 12, tie_word_embeddings: true, rope_theta: 500 }),
  ],
  [
    'llama 3 style: rope_scaling llama3, GQA, head_dim 32 ≠ 48/4',
    llama3Config({ hidden_size: 48, head_dim: 32 }),
  ],
  ['qwen3: q/k norms, head_dim 16 ≠ 32/4, tied head, no biases', qwen3Config()],
];

/**
 * Sequence length per case. Llama 3 scaling changes only frequencies whose wavelength exceeds
 * 8192 / 4 = 2048 positions, so its case runs longer sequences for the change to show.
 */
const seqOf = (cfg: HFModelConfig): number => (cfg.rope_scaling ? 64 : 13);

/** Cases saved with a PEFT adapter (random A and B); the reference applies it itself. */
const ADAPTER_CASES: Array<[string, HFModelConfig]> = [
  ['llama GQA + PEFT adapter on q, v, down', tinyConfig()],
  [
    'qwen3 + PEFT adapter on q, v, down',
    tinyConfig({ model_type: 'qwen3', head_dim: 16, tie_word_embeddings: true }),
  ],
];

interface Prepared {
  model: CausalLM;
  batch: number[][];
  out: string;
  /** Reference logits of the same weights with rope_scaling null (scaled cases only). */
  unscaledOut?: string;
}

describe.skipIf(!hasTorch)('logits match an independent PyTorch implementation', () => {
  const prepared: Prepared[] = [];

  beforeAll(async () => {
    await useTestBackend();
    const args: string[] = [];
    for (const [, cfg] of CASES) {
      const model = createCausalLM(cfg, { seed: 7, initStd: 0.2 });
      const dir = await tempDir();
      await saveCausalLM(model, dir);
      const rng = new SeededRng(3);
      const seq = seqOf(cfg);
      const batch = [randomIds(rng, seq, cfg.vocab_size), randomIds(rng, seq, cfg.vocab_size)];
      await writeFile(join(dir, 'ids.json'), JSON.stringify(batch));
      args.push(dir, join(dir, 'ids.json'), join(dir, 'out.bin'));
      const p: Prepared = { model, batch, out: join(dir, 'out.bin') };
      if (cfg.rope_scaling) {
        // The same weights without the scaling, to show that the scaling changes the logits.
        const plain = join(dir, 'unscaled');
        await mkdir(plain);
        const json = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
        await writeFile(
          join(plain, 'config.json'),
          JSON.stringify({ ...json, rope_scaling: null }),
        );
        await copyFile(join(dir, 'model.safetensors'), join(plain, 'model.safetensors'));
        p.unscaledOut = join(plain, 'out.bin');
        args.push(plain, join(dir, 'ids.json'), p.unscaledOut);
      }
      prepared.push(p);
    }
    for (const [, cfg] of ADAPTER_CASES) {
      const model = createCausalLM(cfg, {
        seed: 8,
        initStd: 0.2,
        lora: { targetModules: ['q_proj', 'v_proj', 'down_proj'], r: 4, alpha: 8 },
      });
      for (const v of model.adapter?.variables() ?? []) {
        v.assign(tf.randomNormal(v.shape, 0, 0.2, 'float32', 5));
      }
      const dir = await tempDir();
      await saveCausalLM(model, dir);
      await saveAdapter(model, join(dir, 'adapter'));
      const rng = new SeededRng(4);
      const batch = [randomIds(rng, 11, cfg.vocab_size)];
      await writeFile(join(dir, 'ids.json'), JSON.stringify(batch));
      args.push(dir, join(dir, 'ids.json'), join(dir, 'out.bin'));
      prepared.push({ model, batch, out: join(dir, 'out.bin') });
    }
    // One interpreter for every case: importing torch dominates the run time.
    const r = spawnSync(PYTHON, [SCRIPT, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`reference script failed: ${r.stderr}`);
  }, 120_000);

  const readF32 = async (path: string): Promise<Float32Array> => {
    const buf = await readFile(path);
    return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  };

  [...CASES, ...ADAPTER_CASES].forEach(([name, cfg], i) => {
    it(`${name}: |Δlogits| < 1e-4`, async () => {
      const { model, batch, out, unscaledOut } = prepared[i] as Prepared;
      const ref = await readF32(out);
      if (unscaledOut) {
        // Without this the case could pass with the scaling ignored on both sides.
        expect(maxAbsDiff(ref, await readF32(unscaledOut))).toBeGreaterThan(1e-2);
      }
      const ours = await model.logits(batch);
      expect(ours.length).toBe(batch.length * (batch[0]?.length ?? 0) * cfg.vocab_size);
      expect(ref.length).toBe(ours.length);
      let scale = 0;
      for (const v of ref) scale = Math.max(scale, Math.abs(v));
      expect(scale).toBeGreaterThan(0.5); // logits are not trivially small
      expect(maxAbsDiff(ours, ref)).toBeLessThan(1e-4);
      model.dispose();
    });
  });
});
