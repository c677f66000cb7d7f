import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../src/errors.js';
import { readPeftAdapter, writePeftAdapter } from '../src/peft.js';
import { loraScaling, type PeftAdapterConfig, parsePeftAdapterConfig } from '../src/peft-config.js';
import { peftAdapterFiles, validatePeftTensors } from '../src/peft-files.js';
import { parsePeftKey, peftKey } from '../src/peft-keys.js';
import { serializeSafetensors, type TensorInput } from '../src/safetensors-write.js';
import { f32Bits, randomNormal, rejectionOf, tinyConfig, withTempDir } from './test-helpers.js';

const base = tinyConfig(); // d 8, 2 heads of 4, 1 kv head, ffn 12, 2 layers
const config: PeftAdapterConfig = {
  peft_type: 'LORA',
  task_type: 'CAUSAL_LM',
  r: 2,
  lora_alpha: 16,
  lora_dropout: 0,
  target_modules: ['q_proj', 'v_proj'],
  bias: 'none',
  fan_in_fan_out: false,
  base_model_name_or_path: 'tiny-llama',
};

function adapterTensors(r = 2): Map<string, TensorInput> {
  const out = new Map<string, TensorInput>();
  let seed = 100;
  for (let layer = 0; layer < 2; layer++) {
    out.set(peftKey(layer, 'q_proj', 'A'), { shape: [r, 8], data: randomNormal(r * 8, seed++) });
    out.set(peftKey(layer, 'q_proj', 'B'), { shape: [8, r], data: randomNormal(8 * r, seed++) });
    out.set(peftKey(layer, 'v_proj', 'A'), { shape: [r, 8], data: randomNormal(r * 8, seed++) });
    out.set(peftKey(layer, 'v_proj', 'B'), { shape: [4, r], data: randomNormal(4 * r, seed++) });
  }
  return out;
}

describe('PEFT key names', () => {
  it('match PEFT exactly', () => {
    expect(peftKey(0, 'q_proj', 'A')).toBe(
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
    );
    expect(peftKey(11, 'v_proj', 'B')).toBe(
      'base_model.model.model.layers.11.self_attn.v_proj.lora_B.weight',
    );
    expect(peftKey(3, 'down_proj', 'A')).toBe(
      'base_model.model.model.layers.3.mlp.down_proj.lora_A.weight',
    );
    expect(() => peftKey(0, 'lm_head', 'A')).toThrow(RangeError);
    expect(() => peftKey(-1, 'q_proj', 'A')).toThrow(RangeError);
  });
  it('parse back, with or without the adapter name', () => {
    expect(parsePeftKey(peftKey(5, 'gate_proj', 'B'))).toEqual({
      layer: 5,
      module: 'gate_proj',
      which: 'B',
    });
    expect(
      parsePeftKey('base_model.model.model.layers.2.self_attn.k_proj.lora_A.default.weight'),
    ).toEqual({
      layer: 2,
      module: 'k_proj',
      which: 'A',
    });
    expect(parsePeftKey('base_model.model.model.layers.2.mlp.q_proj.lora_A.weight')).toBeNull();
    expect(parsePeftKey('base_model.model.lm_head.lora_A.weight')).toBeNull();
    expect(parsePeftKey('model.layers.0.self_attn.q_proj.weight')).toBeNull();
  });
  it('scaling is alpha / r, or alpha / sqrt(r) with rsLoRA', () => {
    expect(loraScaling({ r: 8, lora_alpha: 16 })).toBe(2);
    expect(loraScaling({ r: 16, lora_alpha: 16, use_rslora: true })).toBe(4);
  });
});

describe('writePeftAdapter → readPeftAdapter', () => {
  it('round-trips bit-exactly and writes only long-standing config fields', async () => {
    await withTempDir(async (dir) => {
      const tensors = adapterTensors();
      await writePeftAdapter(dir, config, tensors, { baseConfig: base });
      expect((await readdir(dir)).sort()).toEqual([
        'adapter_config.json',
        'adapter_model.safetensors',
      ]);
      // The folder holds exactly the contents peftAdapterFiles gives in memory.
      const inMemory = peftAdapterFiles(config, tensors, { baseConfig: base });
      expect(await readFile(join(dir, 'adapter_config.json'), 'utf8')).toBe(inMemory.config);
      expect(new Uint8Array(await readFile(join(dir, 'adapter_model.safetensors')))).toEqual(
        inMemory.weights,
      );
      const written = JSON.parse(await readFile(join(dir, 'adapter_config.json'), 'utf8'));
      expect(written).toEqual({
        base_model_name_or_path: 'tiny-llama',
        bias: 'none',
        fan_in_fan_out: false,
        inference_mode: true,
        init_lora_weights: true,
        layers_pattern: null,
        layers_to_transform: null,
        lora_alpha: 16,
        lora_dropout: 0,
        modules_to_save: null,
        peft_type: 'LORA',
        r: 2,
        revision: null,
        target_modules: ['q_proj', 'v_proj'],
        task_type: 'CAUSAL_LM',
      });
      const back = await readPeftAdapter(dir, { baseConfig: base });
      expect(back.config).toMatchObject({
        r: 2,
        lora_alpha: 16,
        target_modules: ['q_proj', 'v_proj'],
      });
      expect([...back.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
      for (const [k, t] of tensors) {
        expect(back.tensors.get(k)!.shape).toEqual(t.shape);
        expect(f32Bits(back.tensors.get(k)!.data)).toEqual(f32Bits(t.data));
      }
    });
  });

  it('reads a folder as newer PEFT writes it (extra fields, adapter names, string targets)', async () => {
    await withTempDir(async (dir) => {
      const renamed = new Map(
        [...adapterTensors()].map(([k, t]) => [k.replace('.weight', '.default.weight'), t]),
      );
      await writeFile(join(dir, 'adapter_model.safetensors'), serializeSafetensors(renamed));
      await writeFile(
        join(dir, 'adapter_config.json'),
        JSON.stringify({
          peft_type: 'LORA',
          task_type: 'CAUSAL_LM',
          r: 2,
          lora_alpha: 4,
          target_modules: 'all-linear',
          use_dora: false,
          rank_pattern: {},
          alpha_pattern: {},
          exclude_modules: null,
          eva_config: null,
        }),
      );
      const back = await readPeftAdapter(dir, { baseConfig: base });
      expect(back.config.target_modules).toEqual(['q_proj', 'v_proj']);
      expect(back.config.lora_dropout).toBe(0);
      expect(back.tensors.has(peftKey(1, 'v_proj', 'B'))).toBe(true);
      expect(back.config.eva_config).toBeNull();
    });
  });

  it('rejects bad adapters with typed errors naming file and tensor', async () => {
    await withTempDir(async (dir) => {
      const cases: [Map<string, TensorInput>, string, string][] = [];
      const wrongShape = adapterTensors();
      wrongShape.set(peftKey(0, 'v_proj', 'B'), { shape: [8, 2], data: new Float32Array(16) });
      cases.push([wrongShape, 'shape_mismatch', peftKey(0, 'v_proj', 'B')]);
      const wrongRank = adapterTensors(3);
      cases.push([wrongRank, 'shape_mismatch', peftKey(0, 'q_proj', 'A')]);
      const noB = adapterTensors();
      noB.delete(peftKey(1, 'q_proj', 'B'));
      cases.push([noB, 'missing_tensor', peftKey(1, 'q_proj', 'B')]);
      const noLayer = adapterTensors();
      noLayer.delete(peftKey(1, 'v_proj', 'A'));
      noLayer.delete(peftKey(1, 'v_proj', 'B'));
      cases.push([noLayer, 'missing_tensor', peftKey(1, 'v_proj', 'A')]);
      const stray = adapterTensors();
      stray.set('base_model.model.lm_head.weight', { shape: [1], data: new Float32Array(1) });
      cases.push([stray, 'invalid_tensor', 'base_model.model.lm_head.weight']);
      const untargeted = adapterTensors();
      untargeted.set(peftKey(0, 'k_proj', 'A'), { shape: [2, 8], data: new Float32Array(16) });
      cases.push([untargeted, 'invalid_config', peftKey(0, 'k_proj', 'A')]);
      const tooDeep = adapterTensors();
      tooDeep.set(peftKey(2, 'q_proj', 'A'), { shape: [2, 8], data: new Float32Array(16) });
      cases.push([tooDeep, 'shape_mismatch', peftKey(2, 'q_proj', 'A')]);
      for (const [tensors, code, tensor] of cases) {
        const e = await rejectionOf(writePeftAdapter(dir, config, tensors, { baseConfig: base }));
        expect(e, e.message).toMatchObject({
          code,
          tensor,
          file: join(dir, 'adapter_model.safetensors'),
        });
        // The same files written without checks are refused on read.
        await writeFile(join(dir, 'adapter_model.safetensors'), serializeSafetensors(tensors));
        await writeFile(join(dir, 'adapter_config.json'), JSON.stringify(config));
        const r = await rejectionOf(readPeftAdapter(dir, { baseConfig: base }));
        expect(r).toMatchObject({ code, tensor });
      }
      expect(() =>
        validatePeftTensors(parsePeftAdapterConfig(config), adapterTensors()),
      ).not.toThrow();
    });
  });

  it('rejects unsupported or malformed configs and missing files', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ peft_type: 'PREFIX_TUNING' }, 'peft_type'],
      [{ task_type: 'SEQ_CLS' }, 'task_type'],
      [{ r: 0 }, 'r'],
      [{ lora_dropout: 1 }, 'lora_dropout'],
      [{ target_modules: ['q_proj', 'lm_head'] }, 'target_modules'],
      [{ bias: 'all' }, 'bias'],
      [{ fan_in_fan_out: true }, 'fan_in_fan_out'],
      [{ use_dora: true }, 'use_dora'],
      [{ rank_pattern: { q_proj: 4 } }, 'rank_pattern'],
      [{ modules_to_save: ['lm_head'] }, 'modules_to_save'],
      [{ layers_to_transform: [-1] }, 'layers_to_transform'],
    ];
    for (const [patch, field] of bad) {
      let err: unknown;
      try {
        parsePeftAdapterConfig({ ...config, ...patch }, 'a/adapter_config.json');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CheckpointError);
      expect((err as CheckpointError).code).toBe('invalid_config');
      expect((err as CheckpointError).message).toContain(field);
      expect((err as CheckpointError).file).toBe('a/adapter_config.json');
    }
    await withTempDir(async (dir) => {
      expect(await rejectionOf(readPeftAdapter(dir))).toMatchObject({
        code: 'missing_file',
        file: join(dir, 'adapter_config.json'),
      });
      await mkdir(join(dir, 'a'));
      await writeFile(join(dir, 'a', 'adapter_config.json'), JSON.stringify(config));
      await writeFile(join(dir, 'a', 'adapter_model.bin'), 'x');
      const e = await rejectionOf(readPeftAdapter(join(dir, 'a')));
      expect(e).toMatchObject({
        code: 'missing_file',
        file: join(dir, 'a', 'adapter_model.safetensors'),
      });
      expect(e.message).toContain('safe_serialization');
    });
  });

  it('honours layers_to_transform when checking coverage', async () => {
    await withTempDir(async (dir) => {
      const only0 = new Map([...adapterTensors()].filter(([k]) => parsePeftKey(k)!.layer === 0));
      await writePeftAdapter(dir, { ...config, layers_to_transform: [0] }, only0, {
        baseConfig: base,
      });
      const back = await readPeftAdapter(dir, { baseConfig: base });
      expect(back.config.layers_to_transform).toEqual([0]);
      expect(back.tensors.size).toBe(4);
    });
  });
});
