import type { Llama3RopeScaling } from '@poad/hf-files';
import { describe, expect, it } from 'vitest';
import { type HFModelConfig, resolveModelConfig, toHFConfig } from '../src/config.js';
import { ModelConfigError } from '../src/errors.js';
import { ropeInverseFrequencies } from '../src/rope.js';
import { tinyConfig } from './configs.js';

const LLAMA31: Llama3RopeScaling = {
  rope_type: 'llama3',
  factor: 8,
  low_freq_factor: 1,
  high_freq_factor: 4,
  original_max_position_embeddings: 8192,
};

function configError(cfg: HFModelConfig): ModelConfigError {
  try {
    resolveModelConfig(cfg);
  } catch (e) {
    expect(e).toBeInstanceOf(ModelConfigError);
    return e as ModelConfigError;
  }
  throw new Error('expected a ModelConfigError');
}

describe('resolveModelConfig: rope_scaling', () => {
  it('accepts llama3 (rope_type or type) and null', () => {
    expect(resolveModelConfig(tinyConfig({ rope_scaling: LLAMA31 })).ropeScaling).toEqual(LLAMA31);
    const { rope_type: _, ...old } = LLAMA31;
    expect(
      resolveModelConfig(tinyConfig({ rope_scaling: { ...old, type: 'llama3' } })).ropeScaling,
    ).toEqual(LLAMA31);
    expect(resolveModelConfig(tinyConfig({ rope_scaling: null })).ropeScaling).toBeNull();
    expect(resolveModelConfig(tinyConfig()).ropeScaling).toBeNull();
  });

  it('refuses other scaling types with a ModelConfigError naming the field and the choices', () => {
    for (const kind of ['linear', 'dynamic', 'yarn', 'longrope']) {
      const e = configError(tinyConfig({ rope_scaling: { type: kind, factor: 2 } }));
      expect(e.field).toBe('rope_scaling');
      expect(e.message).toMatch(/^config\.rope_scaling: /);
      expect(e.message).toContain(`"${kind}" is not supported`);
      expect(e.message).toContain('supported: "llama3", or rope_scaling null');
    }
  });

  it('refuses malformed llama3 fields, naming each', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ factor: 0.9 }, 'rope_scaling.factor'],
      [{ factor: undefined }, 'rope_scaling.factor'],
      [{ low_freq_factor: -1 }, 'rope_scaling.low_freq_factor'],
      [{ high_freq_factor: 1 }, 'rope_scaling.high_freq_factor'],
      [{ original_max_position_embeddings: 1.5 }, 'rope_scaling.original_max_position_embeddings'],
      [
        { original_max_position_embeddings: '8192' },
        'rope_scaling.original_max_position_embeddings',
      ],
      [{ type: 'dynamic' }, 'rope_scaling.rope_type'],
    ];
    for (const [patch, field] of cases) {
      const e = configError(tinyConfig({ rope_scaling: { ...LLAMA31, ...patch } }));
      expect(e.field).toBe(field);
      expect(e.message.startsWith(`config.${field}: `)).toBe(true);
    }
    expect(configError(tinyConfig({ rope_scaling: 'llama3' })).field).toBe('rope_scaling');
  });

  it('toHFConfig writes the scaling back, so the config resolves to itself', () => {
    for (const cfg of [
      tinyConfig({ rope_scaling: LLAMA31, head_dim: 16, rope_theta: 500000 }),
      tinyConfig({ model_type: 'qwen3', head_dim: 16, tie_word_embeddings: true }),
      tinyConfig({ model_type: 'qwen3', head_dim: 16, attention_bias: true }),
    ]) {
      const c = resolveModelConfig(cfg);
      const hf = toHFConfig(c);
      expect(resolveModelConfig(hf)).toEqual(c);
      expect(hf.rope_scaling).toEqual(cfg.rope_scaling ?? null);
    }
  });
});

describe('resolveModelConfig: qwen3', () => {
  it('has q/k norms, no biases by default, attention_bias on all four, head_dim as given', () => {
    const c = resolveModelConfig(tinyConfig({ model_type: 'qwen3', head_dim: 16 }));
    expect(c).toMatchObject({ qkNorm: true, qkvBias: false, oBias: false, headDim: 16 });
    const b = resolveModelConfig(
      tinyConfig({ model_type: 'qwen3', head_dim: 16, attention_bias: true }),
    );
    expect(b).toMatchObject({ qkvBias: true, oBias: true });
    expect(resolveModelConfig(tinyConfig({ model_type: 'qwen3' })).headDim).toBe(128);
    for (const model_type of ['llama', 'mistral', 'qwen2']) {
      expect(resolveModelConfig(tinyConfig({ model_type })).qkNorm).toBe(false);
    }
    expect(toHFConfig(c).architectures).toEqual(['Qwen3ForCausalLM']);
  });
});

describe('ropeInverseFrequencies', () => {
  // theta 500000, head size 32: f_i = 500000^(-i/16). With Llama 3.1's scaling the wavelengths
  // 2π/f_i below 8192/4 = 2048 are kept (i ≤ 7), i = 8 (4442.9) lies in the blended band with
  // s = (8192/4442.88 − 1)/3 = 0.281283, and i ≥ 9 (wavelength > 8192) are divided by 8.
  const expected: [number, number][] = [
    [0, 1],
    [7, 3.2114459948e-3],
    [8, 5.2484616099e-4],
    [9, 7.7846552739e-5],
    [15, 5.6770881008e-7],
  ];

  it('matches hand-computed Llama 3.1 values band by band', () => {
    const f = ropeInverseFrequencies(32, 500000, LLAMA31);
    expect(f.length).toBe(16);
    for (const [i, want] of expected) {
      expect(Math.abs((f[i] as number) - want) / want, `f[${i}]`).toBeLessThan(1e-9);
    }
  });

  it('without scaling is theta^(-2i/h)', () => {
    const f = ropeInverseFrequencies(32, 500000);
    expect(Math.abs((f[8] as number) - 1 / Math.sqrt(500000))).toBeLessThan(1e-15);
    expect(Math.abs((f[9] as number) - 6.2277242191e-4) / 6.2277242191e-4).toBeLessThan(1e-9);
  });
});
