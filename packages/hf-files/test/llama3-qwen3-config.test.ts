import { describe, expect, it } from 'vitest';
import {
  effectiveSlidingWindow,
  hasQkNorm,
  llamaBiasLayout,
  parseLlamaConfig,
  parseRopeScaling,
} from '../src/llama-config.js';
import { expectedLlamaTensors, validateLlamaTensors } from '../src/llama-tensors.js';
import { errorOf, randomTensors, LLAMA_SIZES as sizes, tinyConfig } from './test-helpers.js';

/** Llama 3.1's published rope_scaling. */
const LLAMA31 = {
  rope_type: 'llama3',
  factor: 8.0,
  low_freq_factor: 1.0,
  high_freq_factor: 4.0,
  original_max_position_embeddings: 8192,
};

describe('rope_scaling in config.json', () => {
  it('accepts llama3 under rope_type or the older key type, and keeps its fields', () => {
    for (const scaling of [
      LLAMA31,
      { ...LLAMA31, rope_type: undefined, type: 'llama3' },
      { ...LLAMA31, type: 'llama3' },
    ]) {
      const c = parseLlamaConfig({ model_type: 'llama', ...sizes, rope_scaling: scaling });
      expect(c.rope_scaling).toEqual({
        rope_type: 'llama3',
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 8192,
      });
    }
  });

  it('null, absent and rope_type "default" mean plain rotary embeddings', () => {
    for (const rope_scaling of [null, undefined, { rope_type: 'default' }, { type: 'default' }]) {
      expect(parseLlamaConfig({ model_type: 'llama', ...sizes, rope_scaling }).rope_scaling).toBe(
        null,
      );
    }
  });

  it('refuses every other scaling type, naming it and the supported choices', () => {
    for (const kind of ['linear', 'dynamic', 'yarn', 'longrope', 'su', 'mrope']) {
      for (const key of ['rope_type', 'type']) {
        const e = errorOf(() =>
          parseLlamaConfig(
            { model_type: 'llama', ...sizes, rope_scaling: { [key]: kind, factor: 4 } },
            'm/config.json',
          ),
        );
        expect(e.code).toBe('invalid_config');
        expect(e.file).toBe('m/config.json');
        expect(e.message).toContain('field "rope_scaling"');
        expect(e.message).toContain(`"${kind}" is not supported`);
        expect(e.message).toContain('"llama3"');
        expect(e.message).toContain('rope_scaling null');
      }
    }
  });

  it('refuses malformed llama3 fields, naming the field and showing a correct value', () => {
    const bad: [Record<string, unknown>, string, string][] = [
      [{ factor: undefined }, 'rope_scaling.factor', 'a number >= 1'],
      [{ factor: 0.5 }, 'rope_scaling.factor', 'a number >= 1'],
      [{ factor: '8' }, 'rope_scaling.factor', 'a number >= 1'],
      [{ factor: Number.NaN }, 'rope_scaling.factor', 'a number >= 1'],
      [{ low_freq_factor: 0 }, 'rope_scaling.low_freq_factor', 'a positive number'],
      [{ low_freq_factor: null }, 'rope_scaling.low_freq_factor', 'a positive number'],
      [
        { high_freq_factor: 1 },
        'rope_scaling.high_freq_factor',
        'a number greater than low_freq_factor (1)',
      ],
      [
        { high_freq_factor: 0.5 },
        'rope_scaling.high_freq_factor',
        'a number greater than low_freq_factor (1)',
      ],
      [
        { original_max_position_embeddings: 0 },
        'rope_scaling.original_max_position_embeddings',
        'a positive integer',
      ],
      [
        { original_max_position_embeddings: 8192.5 },
        'rope_scaling.original_max_position_embeddings',
        'a positive integer',
      ],
    ];
    for (const [patch, field, want] of bad) {
      const e = errorOf(() =>
        parseLlamaConfig({ model_type: 'llama', ...sizes, rope_scaling: { ...LLAMA31, ...patch } }),
      );
      expect(e.code).toBe('invalid_config');
      expect(e.message).toContain(`field "${field}" must be ${want}`);
      expect(e.message).toContain('"original_max_position_embeddings": 8192');
    }
  });

  it('refuses a scaling without a type, with two different types, or of the wrong JSON type', () => {
    let e = errorOf(() =>
      parseLlamaConfig({ model_type: 'llama', ...sizes, rope_scaling: { factor: 8 } }),
    );
    expect(e.message).toContain('field "rope_scaling.rope_type" is missing');
    e = errorOf(() =>
      parseLlamaConfig({
        model_type: 'llama',
        ...sizes,
        rope_scaling: { ...LLAMA31, type: 'linear' },
      }),
    );
    expect(e.message).toContain('field "rope_scaling.rope_type" is "llama3"');
    expect(e.message).toContain('keep one of them');
    for (const rope_scaling of ['llama3', 8, [LLAMA31]]) {
      e = errorOf(() => parseLlamaConfig({ model_type: 'llama', ...sizes, rope_scaling }));
      expect(e.message).toContain('field "rope_scaling" must be an object or null');
    }
  });

  it('parseRopeScaling reports through the caller’s error type', () => {
    class Custom extends Error {}
    expect(() =>
      parseRopeScaling({ rope_type: 'yarn' }, (f, m) => new Custom(`${f}|${m}`)),
    ).toThrow(Custom);
    expect(() => parseRopeScaling({ ...LLAMA31, factor: 0 }, (f) => new Custom(f))).toThrow(
      /^rope_scaling\.factor$/,
    );
  });
});

describe('qwen3 in config.json and its tensors', () => {
  it('fills qwen3 defaults: no attention biases, head_dim 128 when absent, no sliding window', () => {
    const c = parseLlamaConfig({ model_type: 'qwen3', ...sizes, sliding_window: 4096 });
    expect(c.head_dim).toBe(128);
    expect(c.attention_bias).toBe(false);
    expect(c.max_position_embeddings).toBe(32768);
    expect(llamaBiasLayout(c)).toEqual({ qkv: false, o: false });
    expect(effectiveSlidingWindow(c)).toBeNull();
    expect(effectiveSlidingWindow({ ...c, use_sliding_window: true })).toBe(4096);
    const biased = parseLlamaConfig({ model_type: 'qwen3', ...sizes, attention_bias: true });
    expect(llamaBiasLayout(biased)).toEqual({ qkv: true, o: true });
    expect(hasQkNorm('qwen3')).toBe(true);
    for (const t of ['llama', 'mistral', 'qwen2']) expect(hasQkNorm(t)).toBe(false);
  });

  it('lists per-head q_norm and k_norm weights of shape [head_dim], and no biases', () => {
    const c = parseLlamaConfig({
      model_type: 'qwen3',
      ...sizes,
      num_key_value_heads: 2,
      head_dim: 24,
      tie_word_embeddings: true,
    });
    const t = new Map(expectedLlamaTensors(c).map((e) => [e.name, e.shape]));
    for (const i of [0, 1]) {
      expect(t.get(`model.layers.${i}.self_attn.q_norm.weight`)).toEqual([24]);
      expect(t.get(`model.layers.${i}.self_attn.k_norm.weight`)).toEqual([24]);
    }
    expect(t.get('model.layers.0.self_attn.q_proj.weight')).toEqual([96, 64]);
    expect(t.get('model.layers.0.self_attn.k_proj.weight')).toEqual([48, 64]);
    expect(t.get('model.layers.0.self_attn.o_proj.weight')).toEqual([64, 96]);
    expect([...t.keys()].some((n) => n.endsWith('.bias'))).toBe(false);
    // embed + per layer (2 norms + 7 projections + q/k norms) + final norm; tied head.
    expect(t.size).toBe(1 + 2 * 11 + 1);
    const llama = parseLlamaConfig({ model_type: 'llama', ...sizes });
    expect(expectedLlamaTensors(llama).some((e) => e.name.includes('_norm.weight'))).toBe(false);
  });

  it('names a missing or misshapen q/k norm', () => {
    const c = tinyConfig({ model_type: 'qwen3', head_dim: 6 });
    expect(validateLlamaTensors(c, randomTensors(c)).unexpected).toEqual([]);
    const missing = randomTensors(c);
    missing.delete('model.layers.1.self_attn.k_norm.weight');
    expect(errorOf(() => validateLlamaTensors(c, missing))).toMatchObject({
      code: 'missing_tensor',
      tensor: 'model.layers.1.self_attn.k_norm.weight',
    });
    const wrong = randomTensors(c);
    wrong.set('model.layers.0.self_attn.q_norm.weight', {
      shape: [4],
      data: new Float32Array(4),
    });
    const e = errorOf(() => validateLlamaTensors(c, wrong));
    expect(e).toMatchObject({
      code: 'shape_mismatch',
      tensor: 'model.layers.0.self_attn.q_norm.weight',
    });
    expect(e.message).toContain('[6]');
    // A llama checkpoint carrying q/k norms reports them as extras.
    const l = tinyConfig();
    const extra = randomTensors(l);
    extra.set('model.layers.0.self_attn.q_norm.weight', { shape: [4], data: new Float32Array(4) });
    expect(validateLlamaTensors(l, extra).unexpected).toEqual([
      'model.layers.0.self_attn.q_norm.weight',
    ]);
  });
});
