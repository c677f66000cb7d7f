import type { TensorData, TrainerCheckpoint } from './checkpoint.js';
import { CheckpointMismatchError } from './errors.js';

function toBase64(a: Float32Array): string {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

function fromBase64(text: string, what: string): Float32Array {
  if (typeof text !== 'string')
    throw new CheckpointMismatchError(`${what} is not a base64 string.`);
  const s = atob(text);
  if (s.length % 4 !== 0)
    throw new CheckpointMismatchError(`${what} has ${s.length} bytes, not a multiple of 4.`);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

const F32 = '__f32';

/**
 * Serialises a checkpoint to JSON text; float32 arrays become base64 of their little-endian
 * bytes, so the round trip is bit-exact. Write the text atomically (temporary file + rename).
 */
export function checkpointToJson(checkpoint: TrainerCheckpoint): string {
  return JSON.stringify(checkpoint, (_key, value: unknown) =>
    value instanceof Float32Array ? { [F32]: toBase64(value) } : value,
  );
}

/**
 * Parses text from {@link checkpointToJson}.
 * @throws CheckpointMismatchError when the text is not such a checkpoint.
 */
export function checkpointFromJson(text: string): TrainerCheckpoint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value: unknown) => {
      if (value !== null && typeof value === 'object' && F32 in value) {
        return fromBase64((value as Record<string, string>)[F32]!, key || 'array');
      }
      return value;
    });
  } catch (e) {
    if (e instanceof CheckpointMismatchError) throw e;
    throw new CheckpointMismatchError(`the text is not valid JSON (${(e as Error).message}).`);
  }
  const cp = parsed as Partial<TrainerCheckpoint> | null;
  if (cp?.format !== 'poad-ppo-checkpoint') {
    throw new CheckpointMismatchError("the text has no 'poad-ppo-checkpoint' format tag.");
  }
  const ok = (list: unknown) =>
    Array.isArray(list) &&
    list.every((t: TensorData) => t?.data instanceof Float32Array && Array.isArray(t.shape));
  if (!ok(cp.actorWeights) || !ok(cp.criticWeights)) {
    throw new CheckpointMismatchError('weights are missing or malformed.');
  }
  return cp as TrainerCheckpoint;
}
