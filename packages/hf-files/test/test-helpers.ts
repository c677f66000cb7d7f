import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '@poad/dev-kit';
import { CheckpointError } from '../src/errors.js';
import { type LlamaConfig, parseLlamaConfig } from '../src/llama-config.js';
import { expectedLlamaTensors } from '../src/llama-tensors.js';

/** `n` seeded standard-normal float32 values (Box–Muller). */
export function randomNormal(n: number, seed: number, scale = 1): Float32Array {
  const u = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const r = Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
    out[i] = r * scale;
  }
  return out;
}

/** Unsigned 32-bit patterns of float32 values. */
export function f32Bits(a: Float32Array): number[] {
  return Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
}

/** Run `fn` with a fresh temporary folder, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'poad-io-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The sizes of a small LLaMA config, for parsing tests. */
export const LLAMA_SIZES = {
  vocab_size: 100,
  hidden_size: 64,
  intermediate_size: 172,
  num_hidden_layers: 2,
  num_attention_heads: 4,
};

/** A tiny LLaMA config for tests, with overrides. */
export function tinyConfig(overrides: Record<string, unknown> = {}): LlamaConfig {
  return parseLlamaConfig({
    model_type: 'llama',
    vocab_size: 32,
    hidden_size: 8,
    intermediate_size: 12,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
    ...overrides,
  });
}

/** Random tensors with exactly the names and shapes `config` needs. */
export function randomTensors(
  config: LlamaConfig,
  seed = 1,
): Map<string, { shape: number[]; data: Float32Array }> {
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  let s = seed;
  for (const { name, shape } of expectedLlamaTensors(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    out.set(name, { shape, data: randomNormal(n, s++, 0.1) });
  }
  return out;
}

/** The `CheckpointError` that `fn` throws; any other outcome fails the test. Test-only. */
export function errorOf(fn: () => unknown): CheckpointError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CheckpointError) return e;
    throw new Error(`expected a CheckpointError, got ${String(e)}`);
  }
  throw new Error('expected a CheckpointError, but nothing was thrown');
}

/** The `CheckpointError` that `p` rejects with; any other outcome fails the test. Test-only. */
export async function rejectionOf(p: Promise<unknown>): Promise<CheckpointError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CheckpointError) return e;
    throw new Error(`expected a CheckpointError, got ${String(e)}`);
  }
  throw new Error('expected a CheckpointError, but nothing was rejected');
}
