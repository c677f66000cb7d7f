/**
 * Frozen weights in their checkpoint's 16-bit precision on webgpu (`weightDtype`): bfloat16 and
 * float16 checkpoints, packed two values per int32 and unpacked inside the kernels, against an
 * independent PyTorch implementation with the same weights upcast to float32 (logits, log-probs,
 * LoRA gradients), the memory they save, what they export and merge, and the errors. Runs where
 * Dawn finds an adapter and /usr/bin/python3 has torch; under CI both must be there.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startWebGpuForTests } from '@poad/dev-kit';
import { readCheckpoint, type StoreDType, writeCheckpoint } from '@poad/hf-files';
import { initBackend, releaseBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it, vi } from 'vitest';
import { causalLMFromTensors, createCausalLM } from '../src/causal-lm.js';
import { loadCausalLM, saveAdapter } from '../src/checkpoint.js';
import type { HFModelConfig } from '../src/config.js';
import { ModelInputError } from '../src/errors.js';
import { llamaConfigOf } from '../src/model-files.js';
import { SeededRng } from '../src/rng.js';
import { MODULE_NAMES, type ModuleName, modulePath } from '../src/weights.js';
import { qwen3Config, tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, tempDir } from './helpers.js';

vi.setConfig({ testTimeout: 180_000 });

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'reference', 'llama_reference.py');
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch, numpy']).status === 0;

const gpu = await startWebGpuForTests(initBackend, releaseBackend);

const LORA = { targetModules: ['q_proj', 'v_proj', 'down_proj'] as ModuleName[], r: 4, alpha: 8 };

/**
 * A random model with a random adapter, written as a `storeAs` checkpoint (base) plus a PEFT
 * adapter folder; returns the folder.
 */
async function writeModel(cfg: HFModelConfig, storeAs: StoreDType, seed: number): Promise<string> {
  const model = createCausalLM(cfg, { seed, initStd: 0.2, lora: LORA, weightDtype: 'float32' });
  for (const v of model.adapter?.variables() ?? []) {
    v.assign(tf.randomNormal(v.shape, 0, 0.2, 'float32', seed + 1));
  }
  const dir = await tempDir('packed-');
  await writeCheckpoint(dir, llamaConfigOf(model), await model.exportWeights(), { storeAs });
  await saveAdapter(model, join(dir, 'adapter'));
  model.dispose();
  return dir;
}

describe('packed 16-bit weights', () => {
  it('run where CI provides a software Vulkan and PyTorch', () => {
    if (process.env.CI) {
      expect(gpu.ok, gpu.ok ? '' : `no WebGPU adapter under CI: ${gpu.reason}`).toBe(true);
      expect(hasTorch, `${PYTHON} lacks torch under CI`).toBe(true);
    }
  });
});

const CASES: Array<[string, HFModelConfig, StoreDType]> = [
  ['llama, GQA, untied head, bf16', tinyConfig(), 'BF16'],
  ['llama, GQA, untied head, f16', tinyConfig(), 'F16'],
  ['qwen3, tied head (the LM head reads the packed embedding), bf16', qwen3Config(), 'BF16'],
];

describe.runIf(gpu.ok && hasTorch)(
  'packed weights on webgpu = PyTorch on the upcast weights',
  () => {
    for (const [name, cfg, storeAs] of CASES) {
      it(`${name}: logits, log-probs and LoRA gradients within 1e-4`, async () => {
        await initBackend('webgpu', { allowSoftwareAdapter: true });
        const dir = await writeModel(cfg, storeAs, 11);
        const rng = new SeededRng(5);
        const batch = [randomIds(rng, 12, cfg.vocab_size), randomIds(rng, 12, cfg.vocab_size)];
        await writeFile(join(dir, 'ids.json'), JSON.stringify(batch));
        await writeFile(join(dir, 'grads.request'), '');
        const out = join(dir, 'out.bin');
        const r = spawnSync(PYTHON, [SCRIPT, dir, join(dir, 'ids.json'), out], {
          encoding: 'utf8',
        });
        expect(r.status, r.stderr).toBe(0);
        const buf = await readFile(out);
        const ref = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
        const refGrads = JSON.parse(await readFile(`${out}.grads.json`, 'utf8')) as Record<
          string,
          number[]
        >;

        const model = await loadCausalLM(dir, { adapterDir: join(dir, 'adapter') });
        const dtype = storeAs === 'BF16' ? 'bfloat16' : 'float16';
        // The weights really are packed: the products below ran on the packed kernels.
        expect(model.weights.embedPacked).toBe(dtype);
        expect(model.weights.layers[0]?.qkv.packed).toBe(dtype);
        expect(model.weights.layers[0]?.qkv.kernel.dtype).toBe('int32');

        const V = cfg.vocab_size;
        const logits = await model.logits(batch);
        expect(maxAbsDiff(logits, ref)).toBeLessThan(1e-4);

        // Log-probs of each next token (float64 log-softmax of the reference logits).
        const refLp: number[] = [];
        for (const [b, row] of batch.entries()) {
          for (let t = 0; t + 1 < row.length; t++) {
            const at = (b * row.length + t) * V;
            let m = -Infinity;
            for (let v = 0; v < V; v++) m = Math.max(m, ref[at + v] as number);
            let s = 0;
            for (let v = 0; v < V; v++) s += Math.exp((ref[at + v] as number) - m);
            refLp.push((ref[at + (row[t + 1] as number)] as number) - m - Math.log(s));
          }
        }
        const prompts = batch.map((row) => row.slice(0, 1));
        const actions = batch.map((row) => row.slice(1));
        const vars = model.policyVariables();
        const { value, grads } = tf.variableGrads(() => {
          const lp = model.tokenStats(prompts, actions).logProbs;
          return tf.sum(lp) as tf.Scalar;
        }, vars);
        const lp = await tf.tidy(() => model.tokenStats(prompts, actions).logProbs).data();
        expect(maxAbsDiff(lp, refLp)).toBeLessThan(1e-4);
        const refSum = refLp.reduce((a, b) => a + b, 0);
        expect(Math.abs((await value.data())[0]! - refSum)).toBeLessThan(1e-3);

        // LoRA gradients: ours are A [in, r] and B [r, out], PEFT's [r, in] and [out, r].
        let compared = 0;
        for (const [i, layer] of (model.adapter?.layers ?? []).entries()) {
          for (const m of MODULE_NAMES) {
            const pair = layer[m];
            if (!pair) continue;
            for (const [part, v] of [
              ['A', pair.A],
              ['B', pair.B],
            ] as const) {
              const key = `base_model.model.${modulePath(i, m)}.lora_${part}.weight`;
              const want = refGrads[key];
              expect(want, key).toBeDefined();
              const g = grads[v.name];
              if (!g) throw new Error(`no gradient for ${key}`);
              const ours = await tf.tidy(() => tf.transpose(g)).data();
              let scale = 1;
              for (const x of want!) scale = Math.max(scale, Math.abs(x));
              expect(maxAbsDiff(ours, want!) / scale, key).toBeLessThan(1e-4);
              compared++;
            }
          }
        }
        expect(compared).toBe(cfg.num_hidden_layers * 3 * 2);
        tf.dispose([value, ...Object.values(grads)]);
        model.dispose();
      });
    }
  },
);

describe.runIf(gpu.ok)('packed weights: memory, export, merge, errors', () => {
  it('a bf16 checkpoint takes at most 0.55× the bytes of its float32 load on webgpu', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const dir = await writeModel(tinyConfig({ vocab_size: 512, hidden_size: 64 }), 'BF16', 3);
    const bytesOf = async (weightDtype: 'auto' | 'float32') => {
      const before = tf.memory().numBytes;
      const model = await loadCausalLM(dir, { weightDtype });
      const bytes = tf.memory().numBytes - before;
      model.dispose();
      return bytes;
    };
    const full = await bytesOf('float32');
    const packed = await bytesOf('auto');
    expect(packed / full).toBeLessThanOrEqual(0.55);
    expect(packed / full).toBeGreaterThan(0.4);
  });

  it("packs a 16-bit checkpoint's matrices from its bits, never decoding them to float32 on the host", async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    for (const [cfg, storeAs, dtype] of [
      [tinyConfig({ tie_word_embeddings: false, vocab_size: 96 }), 'BF16', 'bfloat16'],
      [qwen3Config(), 'F16', 'float16'],
    ] as const) {
      const dir = await writeModel(cfg, storeAs, 6);
      const eager = await readCheckpoint(dir);
      const bits = await readCheckpoint(dir, { halfBits: true });
      // Every matrix's float32 values may not be read: only its 16 bits.
      const guarded = new Map(
        [...bits.tensors].map(([name, t]) => {
          if (t.shape.length !== 2) return [name, t];
          expect(t.bits, name).toBeDefined();
          return [
            name,
            {
              dtype: t.dtype,
              shape: t.shape,
              bits: t.bits,
              get data(): Float32Array {
                throw new Error(`${name}: decoded to float32 on the host`);
              },
            },
          ];
        }),
      );
      const fromBits = causalLMFromTensors(bits.config, guarded, { weightDtype: 'auto' });
      const fromFloats = causalLMFromTensors(eager.config, eager.tensors, { weightDtype: dtype });
      expect(fromBits.weights.layers[0]?.qkv.packed).toBe(dtype);
      expect(fromBits.weights.embedPacked).toBe(dtype);
      const batch = [[1, 5, 9, 2, 7, 3]];
      expect(Array.from(await fromBits.logits(batch))).toEqual(
        Array.from(await fromFloats.logits(batch)),
      );
      // The other 16-bit format than the file's goes through the float32 values.
      const other = dtype === 'bfloat16' ? 'float16' : 'bfloat16';
      const converted = causalLMFromTensors(bits.config, bits.tensors, { weightDtype: other });
      const convertedEager = causalLMFromTensors(eager.config, eager.tensors, {
        weightDtype: other,
      });
      expect(Array.from(await converted.logits(batch))).toEqual(
        Array.from(await convertedEager.logits(batch)),
      );
      for (const m of [fromBits, fromFloats, converted, convertedEager]) m.dispose();
    }
  });

  it('exports the checkpoint values exactly and merges an adapter without changing the logits', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const dir = await writeModel(tinyConfig(), 'F16', 4);
    const file = await readCheckpoint(dir);
    const model = await loadCausalLM(dir, { adapterDir: join(dir, 'adapter') });
    const exported = await model.exportWeights();
    for (const [name, t] of file.tensors) {
      expect(Array.from(exported.get(name)?.data ?? []), name).toEqual(Array.from(t.data));
    }
    const batch = [[1, 5, 9, 2, 7, 3]];
    const before = await model.logits(batch);
    model.mergeAdapter();
    // Merged weights are float32 (a small update rounded to 16 bits would mostly vanish).
    expect(model.weights.layers[0]?.qkv.packed).toBeUndefined();
    expect(model.weights.layers[0]?.o.packed).toBe('float16');
    expect(maxAbsDiff(await model.logits(batch), before)).toBeLessThan(1e-5);
    model.dispose();
  });

  it('a random 16-bit model is drawn and packed on the device, and leaves nothing behind', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const live = tf.memory().numTensors;
    for (const cfg of [tinyConfig(), qwen3Config()]) {
      const model = createCausalLM(cfg, { seed: 2, weightDtype: 'bfloat16', lora: true });
      expect(model.weights.embedPacked).toBe('bfloat16');
      expect(model.weights.layers[1]?.gateUp.packed).toBe('bfloat16');
      // Unpacked, the weights have the asked-for spread (N(0, 0.02)) and norms sit near 1.
      const words = await model.exportWeights();
      const q = words.get('model.layers.1.self_attn.q_proj.weight')?.data ?? new Float32Array();
      const mean = q.reduce((a, b) => a + b, 0) / q.length;
      const sd = Math.sqrt(q.reduce((a, b) => a + (b - mean) ** 2, 0) / q.length);
      expect(sd).toBeGreaterThan(0.015);
      expect(sd).toBeLessThan(0.025);
      const norm = words.get('model.norm.weight')?.data ?? new Float32Array();
      expect(Math.abs(norm.reduce((a, b) => a + b, 0) / norm.length - 1)).toBeLessThan(0.02);
      const logits = await model.logits([[1, 2, 3]]);
      expect(logits.every(Number.isFinite)).toBe(true);
      model.dispose();
    }
    expect(tf.memory().numTensors).toBe(live);
  });

  it('refuses 16-bit storage for full fine-tuning and off webgpu, naming the fix', async () => {
    await initBackend('webgpu', { allowSoftwareAdapter: true });
    const cfg = tinyConfig();
    expect(() => createCausalLM(cfg, { fullFineTune: true, weightDtype: 'bfloat16' })).toThrow(
      ModelInputError,
    );
    expect(() => createCausalLM(cfg, { weightDtype: 'int8' as unknown as 'bfloat16' })).toThrow(
      /"int8" is not one of auto, float32, bfloat16, float16/,
    );
    const dir = await writeModel(cfg, 'BF16', 6);
    await initBackend('wasm');
    try {
      expect(() => createCausalLM(cfg, { weightDtype: 'float16' })).toThrow(
        /webgpu backend only \(active: wasm\); use "auto" or "float32"/,
      );
      // auto on a CPU backend: float32.
      const model = await loadCausalLM(dir);
      expect(model.weights.embedPacked).toBeUndefined();
      expect(model.weights.layers[0]?.qkv.kernel.dtype).toBe('float32');
      model.dispose();
    } finally {
      await initBackend('webgpu', { allowSoftwareAdapter: true });
    }
  });
});
