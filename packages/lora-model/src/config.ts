import {
  hasQkNorm,
  type Llama3RopeScaling,
  parseRopeScaling,
  SUPPORTED_MODEL_TYPES,
} from '@poad/hf-files';
import { ModelConfigError } from './errors.js';

/**
 * A LLaMA-family configuration in Hugging Face `config.json` spelling. Only the size fields are
 * required; the rest take the Hugging Face defaults.
 */
export interface HFModelConfig {
  model_type?: string;
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number;
  rms_norm_eps?: number;
  rope_theta?: number;
  rope_scaling?: unknown;
  max_position_embeddings?: number;
  tie_word_embeddings?: boolean;
  attention_bias?: boolean;
  mlp_bias?: boolean;
  hidden_act?: string;
  bos_token_id?: number | null;
  eos_token_id?: number | number[] | null;
  torch_dtype?: string;
  [key: string]: unknown;
}

/** The resolved configuration the model runs with (every default filled in). */
export interface ModelConfig {
  modelType: string;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKVHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  /** Llama 3 rescaling of the rotary frequencies, or null for plain rotary embeddings. */
  ropeScaling: Llama3RopeScaling | null;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Bias on q, k and v projections (Qwen2, or LLaMA with `attention_bias`). */
  qkvBias: boolean;
  /** Bias on the output projection (LLaMA with `attention_bias`). */
  oBias: boolean;
  /** Per-head RMSNorm of queries and keys before the rotary embedding (Qwen3). */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

function positiveInt(cfg: Record<string, unknown>, field: string): number {
  const v = cfg[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new ModelConfigError(field, `expected a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Fill in defaults and check a Hugging Face style configuration. */
export function resolveModelConfig(cfg: HFModelConfig): ModelConfig {
  const raw = cfg as Record<string, unknown>;
  const modelType = cfg.model_type ?? 'llama';
  if (!SUPPORTED_MODEL_TYPES.includes(modelType)) {
    throw new ModelConfigError(
      'model_type',
      `unsupported model_type "${modelType}"; supported: ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  }
  const hiddenSize = positiveInt(raw, 'hidden_size');
  const numHeads = positiveInt(raw, 'num_attention_heads');
  const numKVHeads =
    cfg.num_key_value_heads == null ? numHeads : positiveInt(raw, 'num_key_value_heads');
  if (numHeads % numKVHeads !== 0) {
    throw new ModelConfigError(
      'num_key_value_heads',
      `${numKVHeads} does not divide num_attention_heads ${numHeads}`,
    );
  }
  let headDim: number;
  if (cfg.head_dim != null) {
    headDim = positiveInt(raw, 'head_dim');
  } else if (modelType === 'qwen3') {
    headDim = 128; // Qwen3's config class default, which real checkpoints spell out anyway
  } else {
    if (hiddenSize % numHeads !== 0) {
      throw new ModelConfigError(
        'hidden_size',
        `${hiddenSize} is not divisible by num_attention_heads ${numHeads}`,
      );
    }
    headDim = hiddenSize / numHeads;
  }
  if (headDim % 2 !== 0) {
    throw new ModelConfigError(
      'head_dim',
      `rotary embeddings need an even head size, got ${headDim}`,
    );
  }
  const ropeScaling = parseRopeScaling(
    cfg.rope_scaling,
    (field, message) => new ModelConfigError(field, message),
  );
  if (cfg.mlp_bias === true) {
    throw new ModelConfigError('mlp_bias', 'MLP biases are not supported');
  }
  if (cfg.hidden_act != null && cfg.hidden_act !== 'silu') {
    throw new ModelConfigError('hidden_act', `only "silu" is supported, got "${cfg.hidden_act}"`);
  }
  const eps = cfg.rms_norm_eps ?? 1e-6;
  const theta = cfg.rope_theta ?? 10000;
  if (!(eps > 0)) throw new ModelConfigError('rms_norm_eps', `must be > 0, got ${eps}`);
  if (!(theta > 0)) throw new ModelConfigError('rope_theta', `must be > 0, got ${theta}`);
  const attnBias = cfg.attention_bias === true;
  const eos = cfg.eos_token_id;
  return {
    modelType,
    vocabSize: positiveInt(raw, 'vocab_size'),
    hiddenSize,
    intermediateSize: positiveInt(raw, 'intermediate_size'),
    numLayers: positiveInt(raw, 'num_hidden_layers'),
    numHeads,
    numKVHeads,
    headDim,
    rmsNormEps: eps,
    ropeTheta: theta,
    ropeScaling,
    maxPositionEmbeddings: cfg.max_position_embeddings ?? 2048,
    tieWordEmbeddings: cfg.tie_word_embeddings ?? false,
    qkvBias: modelType === 'qwen2' || attnBias,
    oBias: modelType !== 'qwen2' && attnBias,
    qkNorm: hasQkNorm(modelType),
    bosTokenId: cfg.bos_token_id ?? null,
    eosTokenIds: eos == null ? [] : Array.isArray(eos) ? eos : [eos],
  };
}

/** Hugging Face class name of each model type, written as `architectures`. */
const ARCHITECTURES: Readonly<Record<string, string>> = {
  llama: 'LlamaForCausalLM',
  mistral: 'MistralForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

/** Write a resolved configuration back in Hugging Face `config.json` spelling. */
export function toHFConfig(c: ModelConfig): HFModelConfig {
  const out: HFModelConfig = {
    architectures: [ARCHITECTURES[c.modelType] ?? 'LlamaForCausalLM'],
    model_type: c.modelType,
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKVHeads,
    head_dim: c.headDim,
    rms_norm_eps: c.rmsNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: c.ropeScaling ? { ...c.ropeScaling } : null,
    max_position_embeddings: c.maxPositionEmbeddings,
    tie_word_embeddings: c.tieWordEmbeddings,
    hidden_act: 'silu',
    torch_dtype: 'float32',
    bos_token_id: c.bosTokenId,
    eos_token_id: c.eosTokenIds.length === 1 ? c.eosTokenIds[0] : c.eosTokenIds,
  };
  if (c.modelType !== 'qwen2') out.attention_bias = c.qkvBias;
  return out;
}
