import { describe, expect, it } from 'vitest';
import { effectiveSlidingWindow, llamaBiasLayout, parseLlamaConfig } from '../src/llama-config.js';
import { expectedLlamaTensors, validateLlamaTensors } from '../src/llama-tensors.js';
import { errorOf, randomTensors, LLAMA_SIZES as sizes, tinyConfig } from './test-helpers.js';

describe('parseLlamaConfig', () => {
  it('fills Hugging Face defaults for llama', () => {
    const c = parseLlamaConfig({ model_type: 'llama', ...sizes, torch_dtype: 'bfloat16' });
    expect(c).toMatchObject({
      num_key_value_heads: 4,
      head_dim: 16,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      max_position_embeddings: 2048,
      tie_word_embeddings: false,
      attention_bias: false,
      torch_dtype: 'bfloat16',
    });
    expect(llamaBiasLayout(c)).toEqual({ qkv: false, o: false });
  });
  it('qwen2 always has q/k/v biases and no o bias; mistral keeps its window', () => {
    const q = parseLlamaConfig({
      model_type: 'qwen2',
      ...sizes,
      num_key_value_heads: 2,
      sliding_window: 4096,
    });
    expect(q.attention_bias).toBe(true);
    expect(q.max_position_embeddings).toBe(32768);
    expect(llamaBiasLayout(q)).toEqual({ qkv: true, o: false });
    expect(effectiveSlidingWindow(q)).toBeNull();
    expect(effectiveSlidingWindow({ ...q, use_sliding_window: true })).toBe(4096);
    const m = parseLlamaConfig({ model_type: 'mistral', ...sizes, sliding_window: 4096 });
    expect(effectiveSlidingWindow(m)).toBe(4096);
    expect(effectiveSlidingWindow({ ...m, sliding_window: null })).toBeNull();
    expect(parseLlamaConfig({ model_type: 'mistral', ...sizes }).sliding_window).toBe(4096);
    expect(
      parseLlamaConfig({ model_type: 'mistral', ...sizes, sliding_window: null }).sliding_window,
    ).toBeNull();
    expect(parseLlamaConfig({ model_type: 'llama', ...sizes }).sliding_window).toBeUndefined();
    const l = parseLlamaConfig({ model_type: 'llama', ...sizes, attention_bias: true });
    expect(llamaBiasLayout(l)).toEqual({ qkv: true, o: true });
  });
  it('keeps explicit values and unknown fields', () => {
    const c = parseLlamaConfig({
      model_type: 'llama',
      ...sizes,
      num_key_value_heads: 1,
      head_dim: 32,
      rope_theta: 500000,
      eos_token_id: [1, 2],
      architectures: ['LlamaForCausalLM'],
      rope_scaling: null,
    });
    expect(c).toMatchObject({
      num_key_value_heads: 1,
      head_dim: 32,
      rope_theta: 500000,
      eos_token_id: [1, 2],
    });
    expect(c.architectures).toEqual(['LlamaForCausalLM']);
  });
  it('names the supported types for an unknown model_type', () => {
    for (const model_type of ['gpt2', undefined, 3]) {
      const e = errorOf(() => parseLlamaConfig({ model_type, ...sizes }, 'dir/config.json'));
      expect(e.code).toBe('unknown_model_type');
      expect(e.file).toBe('dir/config.json');
      expect(e.message).toContain('llama, mistral, qwen2');
    }
  });
  it('rejects missing sizes and unsupported features, naming the field', () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ hidden_size: undefined }, 'hidden_size'],
      [{ vocab_size: 0 }, 'vocab_size'],
      [{ num_hidden_layers: 1.5 }, 'num_hidden_layers'],
      [{ num_key_value_heads: 3 }, 'num_key_value_heads'],
      [{ hidden_size: 66 }, 'hidden_size'],
      [{ head_dim: 7 }, 'head_dim'],
      [{ rms_norm_eps: -1 }, 'rms_norm_eps'],
      [{ rope_scaling: { rope_type: 'llama3', factor: 8 } }, 'rope_scaling'],
      [{ mlp_bias: true }, 'mlp_bias'],
      [{ hidden_act: 'gelu' }, 'hidden_act'],
      [{ tie_word_embeddings: 'yes' }, 'tie_word_embeddings'],
      [{ eos_token_id: -1 }, 'eos_token_id'],
      [{ sliding_window: 0 }, 'sliding_window'],
    ];
    for (const [patch, field] of bad) {
      const e = errorOf(() => parseLlamaConfig({ model_type: 'llama', ...sizes, ...patch }));
      expect(e.code).toBe('invalid_config');
      expect(e.message).toContain(field);
    }
    expect(errorOf(() => parseLlamaConfig([1])).code).toBe('invalid_config');
  });
});

describe('expected tensors and validateLlamaTensors', () => {
  it('lists [out, in] shapes with GQA, biases and an untied head', () => {
    const c = parseLlamaConfig({ model_type: 'qwen2', ...sizes, num_key_value_heads: 2 });
    const t = new Map(expectedLlamaTensors(c).map((e) => [e.name, e.shape]));
    expect(t.get('model.embed_tokens.weight')).toEqual([100, 64]);
    expect(t.get('model.layers.1.self_attn.q_proj.weight')).toEqual([64, 64]);
    expect(t.get('model.layers.1.self_attn.k_proj.weight')).toEqual([32, 64]);
    expect(t.get('model.layers.1.self_attn.k_proj.bias')).toEqual([32]);
    expect(t.get('model.layers.1.self_attn.o_proj.weight')).toEqual([64, 64]);
    expect(t.has('model.layers.1.self_attn.o_proj.bias')).toBe(false);
    expect(t.get('model.layers.0.mlp.down_proj.weight')).toEqual([64, 172]);
    expect(t.get('model.layers.0.mlp.gate_proj.weight')).toEqual([172, 64]);
    expect(t.get('lm_head.weight')).toEqual([100, 64]);
    expect(t.size).toBe(1 + 2 * 12 + 1 + 1);
    const tied = parseLlamaConfig({ model_type: 'llama', ...sizes, tie_word_embeddings: true });
    expect(expectedLlamaTensors(tied).some((e) => e.name === 'lm_head.weight')).toBe(false);
  });

  it('accepts a complete set and reports extras (ignoring rotary buffers)', () => {
    const c = tinyConfig();
    const t = randomTensors(c);
    t.set('model.layers.0.self_attn.rotary_emb.inv_freq', {
      shape: [2],
      data: new Float32Array(2),
    });
    t.set('extra.weight', { shape: [1], data: new Float32Array(1) });
    expect(validateLlamaTensors(c, t).unexpected).toEqual(['extra.weight']);
  });

  it('names the tensor and file for missing tensors, wrong shapes and vocab mismatches', () => {
    const c = tinyConfig();
    const missing = randomTensors(c);
    missing.delete('model.layers.1.mlp.up_proj.weight');
    let e = errorOf(() => validateLlamaTensors(c, missing, 'm.safetensors'));
    expect(e).toMatchObject({
      code: 'missing_tensor',
      file: 'm.safetensors',
      tensor: 'model.layers.1.mlp.up_proj.weight',
    });

    const noHead = randomTensors(c);
    noHead.delete('lm_head.weight');
    e = errorOf(() => validateLlamaTensors(c, noHead));
    expect(e.message).toContain('tie_word_embeddings');

    const wrong = randomTensors(c);
    wrong.set('model.layers.0.self_attn.k_proj.weight', {
      shape: [8, 8],
      data: new Float32Array(64),
    });
    e = errorOf(() => validateLlamaTensors(c, wrong, (n) => `shard-of-${n}`));
    expect(e).toMatchObject({
      code: 'shape_mismatch',
      tensor: 'model.layers.0.self_attn.k_proj.weight',
      file: 'shard-of-model.layers.0.self_attn.k_proj.weight',
    });
    expect(e.message).toContain('[4, 8]');

    for (const name of ['model.embed_tokens.weight', 'lm_head.weight']) {
      const vocab = randomTensors(c);
      vocab.set(name, { shape: [40, 8], data: new Float32Array(320) });
      e = errorOf(() => validateLlamaTensors(c, vocab));
      expect(e).toMatchObject({ code: 'vocab_mismatch', tensor: name });
      expect(e.message).toContain('vocab_size is 32');
    }
  });

  it('a tied head may repeat the embedding but not differ from it', () => {
    const c = tinyConfig({ tie_word_embeddings: true });
    const t = randomTensors(c);
    const embed = t.get('model.embed_tokens.weight')!;
    t.set('lm_head.weight', { shape: embed.shape, data: embed.data.slice() });
    expect(validateLlamaTensors(c, t).unexpected).toEqual([]);
    const head = t.get('lm_head.weight')!.data;
    head[3] = head[3]! + 1;
    expect(errorOf(() => validateLlamaTensors(c, t))).toMatchObject({
      code: 'invalid_config',
      tensor: 'lm_head.weight',
    });
  });
});
