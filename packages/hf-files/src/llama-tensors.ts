import { CheckpointError } from './errors.js';
import { hasQkNorm, type LlamaConfig, llamaBiasLayout } from './llama-config.js';

/** A tensor the architecture needs, with its PyTorch-layout shape ([out, in] for linear weights). */
export interface ExpectedTensor {
  /** Hugging Face tensor name. */
  name: string;
  /** Expected shape. */
  shape: number[];
}

/** Names of the projections in one decoder layer, by sub-block. */
export const ATTENTION_MODULES = Object.freeze(['q_proj', 'k_proj', 'v_proj', 'o_proj'] as const);
/** Names of the SwiGLU MLP projections. */
export const MLP_MODULES = Object.freeze(['gate_proj', 'up_proj', 'down_proj'] as const);

/** Tensors that some checkpoints carry but the model recomputes (e.g. rotary frequency buffers). */
const IGNORABLE = /\.rotary_emb\.inv_freq$/;

/** Every tensor a checkpoint for `config` must hold, with shapes, in a stable order. */
export function expectedLlamaTensors(config: LlamaConfig): ExpectedTensor[] {
  const d = config.hidden_size;
  const q = config.num_attention_heads * config.head_dim;
  const kv = config.num_key_value_heads * config.head_dim;
  const ffn = config.intermediate_size;
  const bias = llamaBiasLayout(config);
  const out: ExpectedTensor[] = [
    { name: 'model.embed_tokens.weight', shape: [config.vocab_size, d] },
  ];
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [d] });
    out.push({ name: `${p}.self_attn.q_proj.weight`, shape: [q, d] });
    out.push({ name: `${p}.self_attn.k_proj.weight`, shape: [kv, d] });
    out.push({ name: `${p}.self_attn.v_proj.weight`, shape: [kv, d] });
    out.push({ name: `${p}.self_attn.o_proj.weight`, shape: [d, q] });
    if (bias.qkv) {
      out.push({ name: `${p}.self_attn.q_proj.bias`, shape: [q] });
      out.push({ name: `${p}.self_attn.k_proj.bias`, shape: [kv] });
      out.push({ name: `${p}.self_attn.v_proj.bias`, shape: [kv] });
    }
    if (bias.o) out.push({ name: `${p}.self_attn.o_proj.bias`, shape: [d] });
    if (hasQkNorm(config.model_type)) {
      out.push({ name: `${p}.self_attn.q_norm.weight`, shape: [config.head_dim] });
      out.push({ name: `${p}.self_attn.k_norm.weight`, shape: [config.head_dim] });
    }
    out.push({ name: `${p}.post_attention_layernorm.weight`, shape: [d] });
    out.push({ name: `${p}.mlp.gate_proj.weight`, shape: [ffn, d] });
    out.push({ name: `${p}.mlp.up_proj.weight`, shape: [ffn, d] });
    out.push({ name: `${p}.mlp.down_proj.weight`, shape: [d, ffn] });
  }
  out.push({ name: 'model.norm.weight', shape: [d] });
  if (!config.tie_word_embeddings)
    out.push({ name: 'lm_head.weight', shape: [config.vocab_size, d] });
  return out;
}

/** Names from {@link expectedLlamaTensors}. */
export function expectedLlamaTensorNames(config: LlamaConfig): string[] {
  return expectedLlamaTensors(config).map((t) => t.name);
}

const sameShape = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether two arrays of words hold the same words. */
function sameWords(x: Uint16Array | Uint32Array, y: Uint16Array | Uint32Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Whether two float32 arrays hold the same bits (NaNs and signed zeros included). */
function sameBits(a: Float32Array, b: Float32Array): boolean {
  return sameWords(
    new Uint32Array(a.buffer, a.byteOffset, a.length),
    new Uint32Array(b.buffer, b.byteOffset, b.length),
  );
}

/**
 * Check that `tensors` hold every tensor `config` needs, with the right shapes: a missing tensor,
 * a wrong shape, or an embedding/head whose row count is not `vocab_size` raises a
 * {@link CheckpointError} naming the file (`fileOf` maps a tensor name to the file holding it)
 * and the tensor. With a tied head, `lm_head.weight` must be absent or equal to the embedding.
 * Returns the names of extra tensors the model will not use.
 */
export function validateLlamaTensors(
  config: LlamaConfig,
  tensors: ReadonlyMap<
    string,
    { shape: readonly number[]; data?: Float32Array; dtype?: string; bits?: Uint16Array }
  >,
  fileOf: string | ((tensor: string) => string) = 'model.safetensors',
): { unexpected: string[] } {
  const where = (name: string): string => (typeof fileOf === 'string' ? fileOf : fileOf(name));
  const expected = expectedLlamaTensors(config);
  for (const { name, shape } of expected) {
    const t = tensors.get(name);
    if (t === undefined) {
      throw new CheckpointError(
        'missing_tensor',
        where(name),
        `tensor is missing; a ${config.model_type} model with ${config.num_hidden_layers} layers${
          name === 'lm_head.weight' ? ' and an untied head (tie_word_embeddings false)' : ''
        } needs it`,
        name,
      );
    }
    checkShape(config, name, t.shape, shape, where(name));
  }
  const embed = 'model.embed_tokens.weight';
  const head = tensors.get('lm_head.weight');
  if (config.tie_word_embeddings && head !== undefined) {
    checkShape(
      config,
      'lm_head.weight',
      head.shape,
      [config.vocab_size, config.hidden_size],
      where('lm_head.weight'),
    );
    const e = tensors.get(embed)!;
    const differ =
      head.bits && e.bits
        ? head.dtype !== e.dtype || !sameWords(head.bits, e.bits)
        : head.data !== undefined && e.data !== undefined && !sameBits(head.data, e.data);
    if (differ) {
      throw new CheckpointError(
        'invalid_config',
        where('lm_head.weight'),
        `tie_word_embeddings is true but lm_head.weight differs from ${embed}; set tie_word_embeddings to false in config.json or drop lm_head.weight`,
        'lm_head.weight',
      );
    }
  }
  const known = new Set(expected.map((t) => t.name));
  if (config.tie_word_embeddings) known.add('lm_head.weight');
  const unexpected = [...tensors.keys()].filter((n) => !known.has(n) && !IGNORABLE.test(n));
  return { unexpected };
}

function checkShape(
  config: LlamaConfig,
  name: string,
  got: readonly number[],
  want: readonly number[],
  file: string,
): void {
  if (sameShape(got, want)) return;
  const vocabTensor = name === 'model.embed_tokens.weight' || name === 'lm_head.weight';
  if (vocabTensor && got.length === 2 && got[1] === want[1]) {
    throw new CheckpointError(
      'vocab_mismatch',
      file,
      `has ${got[0]} rows but config vocab_size is ${config.vocab_size}; make vocab_size in config.json match the checkpoint`,
      name,
    );
  }
  throw new CheckpointError(
    'shape_mismatch',
    file,
    `shape [${got.join(', ')}] does not match [${want.join(', ')}] expected from config.json (PyTorch [out, in] layout)`,
    name,
  );
}
