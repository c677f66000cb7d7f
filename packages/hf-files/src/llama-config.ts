import { CheckpointError } from './errors.js';

/** `model_type` values whose architecture the model implements. */
export const SUPPORTED_MODEL_TYPES: readonly string[] = Object.freeze([
  'llama',
  'mistral',
  'qwen2',
  'qwen3',
]);

/** `rope_scaling.rope_type` values the model implements (besides `default`, plain rotary). */
export const SUPPORTED_ROPE_SCALING: readonly string[] = Object.freeze(['llama3']);

/**
 * Llama 3.x rotary frequency scaling (`rope_scaling` with `rope_type: "llama3"`): low frequencies
 * are divided by `factor`, high ones kept, and the band between blended (see `rope.ts`).
 */
export interface Llama3RopeScaling {
  rope_type: 'llama3';
  /** Divisor of the low frequencies (8 in Llama 3.1). At least 1. */
  factor: number;
  /** Wavelengths above original_max / low_freq_factor are fully scaled (1 in Llama 3.1). */
  low_freq_factor: number;
  /** Wavelengths below original_max / high_freq_factor are kept (4 in Llama 3.1). */
  high_freq_factor: number;
  /** Context length of pre-training before the extension (8192 in Llama 3.1). */
  original_max_position_embeddings: number;
}

const LLAMA3_EXAMPLE =
  'as in Llama 3.1: {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}';

/**
 * Check a `rope_scaling` value. Null, absent or `rope_type: "default"` mean plain rotary
 * embeddings (null is returned); `llama3` (under `rope_type`, or the older key `type`) comes back
 * with its four fields checked. Every other kind and every malformed field goes to `fail`, with the
 * field (e.g. `rope_scaling.factor`) and a message saying what to write instead.
 */
export function parseRopeScaling(
  value: unknown,
  fail: (field: string, message: string) => Error,
): Llama3RopeScaling | null {
  if (value == null) return null;
  if (!isObject(value)) {
    throw fail('rope_scaling', `must be an object or null, got ${JSON.stringify(value)}`);
  }
  const { rope_type: ropeType, type } = value;
  if (ropeType != null && type != null && ropeType !== type) {
    throw fail(
      'rope_scaling.rope_type',
      `is ${JSON.stringify(ropeType)} but rope_scaling.type is ${JSON.stringify(type)}; keep one of them`,
    );
  }
  const kind = ropeType ?? type;
  if (kind === 'default') return null;
  if (kind == null) {
    throw fail(
      'rope_scaling.rope_type',
      `is missing (${JSON.stringify(value)}); write "rope_type": "llama3" for Llama 3 scaling, or set rope_scaling to null`,
    );
  }
  if (kind !== 'llama3') {
    throw fail(
      'rope_scaling',
      `rope_type ${JSON.stringify(kind)} is not supported (${JSON.stringify(value)}); supported: ${SUPPORTED_ROPE_SCALING.map((k) => `"${k}"`).join(', ')}, or rope_scaling null for plain rotary embeddings`,
    );
  }
  const num = (field: string, ok: (v: number) => boolean, want: string): number => {
    const v = value[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) {
      throw fail(
        `rope_scaling.${field}`,
        `must be ${want}, got ${JSON.stringify(v)}; ${LLAMA3_EXAMPLE}`,
      );
    }
    return v;
  };
  const factor = num('factor', (v) => v >= 1, 'a number >= 1');
  const low = num('low_freq_factor', (v) => v > 0, 'a positive number');
  const high = num(
    'high_freq_factor',
    (v) => v > low,
    `a number greater than low_freq_factor (${low})`,
  );
  const original = num(
    'original_max_position_embeddings',
    (v) => Number.isSafeInteger(v) && v > 0,
    'a positive integer',
  );
  return {
    rope_type: 'llama3',
    factor,
    low_freq_factor: low,
    high_freq_factor: high,
    original_max_position_embeddings: original,
  };
}

/**
 * A LLaMA-family `config.json` after validation, in Hugging Face spelling, with every field the
 * model needs filled in (defaults as in the Hugging Face config classes). Fields this package does
 * not use are kept as they were, so a config survives a read → write round trip.
 */
export interface LlamaConfig {
  /** `llama`, `mistral`, `qwen2` or `qwen3`. */
  model_type: string;
  /** Rows of the embedding and LM head. */
  vocab_size: number;
  /** Model width d. */
  hidden_size: number;
  /** Width of the SwiGLU MLP. */
  intermediate_size: number;
  /** Number of decoder layers. */
  num_hidden_layers: number;
  /** Query heads. */
  num_attention_heads: number;
  /** Key/value heads (grouped-query attention); equals the query heads when absent from the file. */
  num_key_value_heads: number;
  /**
   * Size of one head; when absent `hidden_size / num_attention_heads`, except for qwen3 whose
   * config class defaults it to 128. Always even (RoPE).
   */
  head_dim: number;
  /** RMSNorm epsilon (default 1e-6). */
  rms_norm_eps: number;
  /** Rotary base (default 10000). */
  rope_theta: number;
  /** Longest position the checkpoint was trained for. */
  max_position_embeddings: number;
  /** Whether the LM head reuses the embedding matrix (default false). */
  tie_word_embeddings: boolean;
  /** Whether attention projections carry biases (always true for qwen2: q, k and v only). */
  attention_bias: boolean;
  /** Llama 3 rotary scaling, or null for plain rotary embeddings. */
  rope_scaling: Llama3RopeScaling | null;
  /** Beginning-of-sequence token id, if the checkpoint names one. */
  bos_token_id?: number | null;
  /** End-of-sequence token id(s), if the checkpoint names them. */
  eos_token_id?: number | number[] | null;
  /** Padding token id, if the checkpoint names one. */
  pad_token_id?: number | null;
  /**
   * Mistral/Qwen2 sliding-window size as stored. The model attends over the full context, which
   * equals sliding-window attention only for sequences no longer than the window.
   */
  sliding_window?: number | null;
  /** Any other field of the file, kept as read. */
  [key: string]: unknown;
}

interface TypeDefaults {
  max_position_embeddings: number;
  attention_bias: boolean;
  /** Head size when the file has none; undefined means hidden_size / num_attention_heads. */
  head_dim?: number;
}

const DEFAULTS: Readonly<Record<string, TypeDefaults>> = {
  llama: { max_position_embeddings: 2048, attention_bias: false },
  mistral: { max_position_embeddings: 4096 * 32, attention_bias: false },
  qwen2: { max_position_embeddings: 32768, attention_bias: true },
  qwen3: { max_position_embeddings: 32768, attention_bias: false, head_dim: 128 },
};

/**
 * Whether a model type normalises each query and key head with its own RMSNorm before the rotary
 * embedding (`self_attn.q_norm` / `self_attn.k_norm`, Qwen3).
 */
export function hasQkNorm(modelType: string): boolean {
  return modelType === 'qwen3';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validate a parsed `config.json` and fill in Hugging Face defaults. Size fields (`vocab_size`,
 * `hidden_size`, `intermediate_size`, `num_hidden_layers`, `num_attention_heads`) are required:
 * defaulting them would hide a broken file. Unsupported features (`rope_scaling` other than
 * `llama3`, `mlp_bias`, activations other than SiLU, unknown `model_type`) raise a
 * {@link CheckpointError}.
 */
export function parseLlamaConfig(json: unknown, fileName = 'config.json'): LlamaConfig {
  const bad = (field: string, msg: string): CheckpointError =>
    new CheckpointError('invalid_config', fileName, `field "${field}" ${msg}`);
  if (!isObject(json)) {
    throw new CheckpointError('invalid_config', fileName, 'config must be a JSON object');
  }
  const modelType = json.model_type;
  if (typeof modelType !== 'string' || !SUPPORTED_MODEL_TYPES.includes(modelType)) {
    throw new CheckpointError(
      'unknown_model_type',
      fileName,
      `model_type ${JSON.stringify(modelType)} is not supported; supported types: ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  }
  const defaults = DEFAULTS[modelType]!;
  const posInt = (field: string, fallback?: number): number => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      throw bad(field, `must be a positive integer, got ${JSON.stringify(json[field])}`);
    }
    return v;
  };
  const posNum = (field: string, fallback: number): number => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw bad(field, `must be a positive number, got ${JSON.stringify(json[field])}`);
    }
    return v;
  };
  const bool = (field: string, fallback: boolean): boolean => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'boolean') throw bad(field, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const tokenId = (field: string): void => {
    const v = json[field];
    const ok = (x: unknown): boolean => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
    if (v == null) return;
    if (ok(v) || (Array.isArray(v) && field === 'eos_token_id' && v.every(ok))) return;
    throw bad(
      field,
      `must be a non-negative integer${field === 'eos_token_id' ? ' or a list of them' : ''}, got ${JSON.stringify(v)}`,
    );
  };

  const vocab = posInt('vocab_size');
  const hidden = posInt('hidden_size');
  const inter = posInt('intermediate_size');
  const layers = posInt('num_hidden_layers');
  const heads = posInt('num_attention_heads');
  const kvHeads = posInt('num_key_value_heads', heads);
  if (heads % kvHeads !== 0) {
    throw bad('num_key_value_heads', `(${kvHeads}) must divide num_attention_heads (${heads})`);
  }
  if (json.head_dim == null && defaults.head_dim === undefined && hidden % heads !== 0) {
    throw bad(
      'hidden_size',
      `(${hidden}) must be a multiple of num_attention_heads (${heads}) when head_dim is absent`,
    );
  }
  const headDim = posInt('head_dim', defaults.head_dim ?? hidden / heads);
  if (headDim % 2 !== 0)
    throw bad('head_dim', `must be even for rotary embeddings, got ${headDim}`);
  const eps = posNum('rms_norm_eps', 1e-6);
  const theta = posNum('rope_theta', 10000);
  const maxPos = posInt('max_position_embeddings', defaults.max_position_embeddings);
  const tied = bool('tie_word_embeddings', false);
  const attnBias = modelType === 'qwen2' ? true : bool('attention_bias', defaults.attention_bias);
  if (json.mlp_bias === true) throw bad('mlp_bias', 'is true, but MLP biases are not supported');
  const act = json.hidden_act ?? json.hidden_activation ?? 'silu';
  if (act !== 'silu') throw bad('hidden_act', `must be "silu", got ${JSON.stringify(act)}`);
  const ropeScaling = parseRopeScaling(json.rope_scaling, bad);
  for (const f of ['bos_token_id', 'eos_token_id', 'pad_token_id']) tokenId(f);
  const sw = json.sliding_window;
  if (sw != null && !(typeof sw === 'number' && Number.isSafeInteger(sw) && sw > 0)) {
    throw bad('sliding_window', `must be a positive integer or null, got ${JSON.stringify(sw)}`);
  }

  return {
    ...json,
    model_type: modelType,
    vocab_size: vocab,
    hidden_size: hidden,
    intermediate_size: inter,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    rms_norm_eps: eps,
    rope_theta: theta,
    max_position_embeddings: maxPos,
    tie_word_embeddings: tied,
    attention_bias: attnBias,
    rope_scaling: ropeScaling,
    // MistralConfig's default window applies when the field is absent (null means none).
    ...(modelType === 'mistral' && sw === undefined ? { sliding_window: 4096 } : {}),
  };
}

/**
 * Which attention projections carry a bias: Qwen2 has q/k/v biases; `attention_bias` (LLaMA,
 * Mistral, Qwen3) adds all four.
 */
export function llamaBiasLayout(config: LlamaConfig): { qkv: boolean; o: boolean } {
  if (config.model_type === 'qwen2') return { qkv: true, o: false };
  return { qkv: config.attention_bias, o: config.attention_bias };
}

/**
 * The sliding-window size that a Python implementation would apply, or null when attention is
 * over the full context (Qwen2 and Qwen3 apply their window only with `use_sliding_window: true`).
 */
export function effectiveSlidingWindow(config: LlamaConfig): number | null {
  const sw = config.sliding_window;
  if (typeof sw !== 'number') return null;
  const qwen = config.model_type === 'qwen2' || config.model_type === 'qwen3';
  if (qwen && config.use_sliding_window !== true) return null;
  return sw;
}
