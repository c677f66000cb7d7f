import type { HFModelConfig } from '../src/config.js';

// Small model configs of the tests, one per architecture family.

/** A small LLaMA config; override fields per test. */
export function tinyConfig(over: Partial<HFModelConfig> = {}): HFModelConfig {
  return {
    model_type: 'llama',
    vocab_size: 61,
    hidden_size: 32,
    intermediate_size: 48,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: false,
    ...over,
  };
}

/** Llama 3.1's rope scaling (on a base of 500000, as Llama 3 uses). */
export const LLAMA3_SCALING = {
  rope_type: 'llama3',
  factor: 8,
  low_freq_factor: 1,
  high_freq_factor: 4,
  original_max_position_embeddings: 8192,
};

/** A small Llama 3 style config: GQA, head_dim 16 ≠ 32 / 4, base 500000 with Llama 3.1's scaling. */
export function llama3Config(over: Partial<HFModelConfig> = {}): HFModelConfig {
  return tinyConfig({
    head_dim: 16,
    rope_theta: 500_000,
    rope_scaling: { ...LLAMA3_SCALING },
    ...over,
  });
}

/** A small Qwen3 style config: q/k norms, head_dim 16 ≠ 32 / 4, tied embeddings. */
export function qwen3Config(over: Partial<HFModelConfig> = {}): HFModelConfig {
  return tinyConfig({
    model_type: 'qwen3',
    head_dim: 16,
    tie_word_embeddings: true,
    rope_theta: 1_000_000,
    rms_norm_eps: 1e-6,
    ...over,
  });
}
