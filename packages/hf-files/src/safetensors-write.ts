import type { StoreDType } from './dtype.js';
import { CheckpointError } from './errors.js';
import { encodeBfloat16, encodeFloat16 } from './half.js';
import { stringEntries } from './safetensors-header.js';

/** A tensor to write: float32 values in C order plus its shape. */
export interface TensorInput {
  /** Dimensions, outermost first; linear weights are [out, in] in Hugging Face files. */
  shape: readonly number[];
  /** Values in C order; the length must equal the product of `shape`. */
  data: Float32Array;
  /** Stored element type (default `'F32'`); F16 and BF16 round to nearest, ties to even. */
  storeAs?: StoreDType;
}

/** Tensors keyed by name, as a Map or a plain object. */
export type TensorInputs = ReadonlyMap<string, TensorInput> | Readonly<Record<string, TensorInput>>;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();

/** Normalise tensors given as a Map or a record into sorted [name, tensor] pairs. */
export function sortedTensorEntries(tensors: TensorInputs): [string, TensorInput][] {
  const list: [string, TensorInput][] =
    tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors);
  return list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Bytes a tensor takes when stored. */
export function storedByteLength(t: TensorInput): number {
  return t.data.length * (t.storeAs === 'F16' || t.storeAs === 'BF16' ? 2 : 4);
}

function checkTensor(name: string, t: TensorInput, file: string): void {
  if (typeof name !== 'string' || name.length === 0 || name === '__metadata__') {
    throw new CheckpointError(
      'invalid_tensor',
      file,
      `tensor name ${JSON.stringify(name)} is not allowed (empty or reserved)`,
    );
  }
  if (!(t?.data instanceof Float32Array)) {
    throw new CheckpointError('invalid_tensor', file, 'data must be a Float32Array', name);
  }
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new CheckpointError(
      'invalid_tensor',
      file,
      `shape ${JSON.stringify(t.shape)} is not a list of non-negative integers`,
      name,
    );
  }
  const numel = t.shape.reduce((a, b) => a * b, 1);
  if (numel !== t.data.length) {
    throw new CheckpointError(
      'invalid_tensor',
      file,
      `shape ${JSON.stringify(t.shape)} holds ${numel} values but data has ${t.data.length}`,
      name,
    );
  }
  if (
    t.storeAs !== undefined &&
    t.storeAs !== 'F32' &&
    t.storeAs !== 'F16' &&
    t.storeAs !== 'BF16'
  ) {
    throw new CheckpointError(
      'invalid_tensor',
      file,
      `storeAs ${JSON.stringify(t.storeAs)} is not one of F32, F16, BF16`,
      name,
    );
  }
}

function writeData(t: TensorInput, out: Uint8Array, at: number): void {
  const n = t.data.length;
  const dtype = t.storeAs ?? 'F32';
  if (dtype === 'F32') {
    if (LITTLE_ENDIAN) {
      out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, n * 4), at);
    } else {
      const dv = new DataView(out.buffer, out.byteOffset + at, n * 4);
      for (let i = 0; i < n; i++) dv.setFloat32(i * 4, t.data[i]!, true);
    }
    return;
  }
  const bits = new Uint16Array(n);
  if (dtype === 'F16') encodeFloat16(t.data, bits);
  else encodeBfloat16(t.data, bits);
  const dv = new DataView(out.buffer, out.byteOffset + at, n * 2);
  for (let i = 0; i < n; i++) dv.setUint16(i * 2, bits[i]!, true);
}

/**
 * Serialise tensors to the safetensors layout: names sorted, data packed in that order, the JSON
 * header padded with spaces so the data section starts on an 8-byte boundary, and `__metadata__`
 * always carrying `"format": "pt"` so PyTorch-side loaders accept the file.
 */
export function serializeSafetensors(
  tensors: TensorInputs,
  metadata: Readonly<Record<string, string>> = {},
  fileName = '<bytes>',
): Uint8Array {
  const entries = sortedTensorEntries(tensors);
  const meta = stringEntries(
    metadata,
    (k) =>
      new CheckpointError('invalid_tensor', fileName, `metadata value of "${k}" must be a string`),
  );
  meta.format = 'pt';
  const header: Record<string, unknown> = { __metadata__: meta };
  let offset = 0;
  for (const [name, t] of entries) {
    checkTensor(name, t, fileName);
    const size = storedByteLength(t);
    Object.defineProperty(header, name, {
      value: {
        dtype: t.storeAs ?? 'F32',
        shape: [...t.shape],
        data_offsets: [offset, offset + size],
      },
      enumerable: true,
    });
    offset += size;
  }
  const json = encoder.encode(JSON.stringify(header));
  const headerLength = Math.ceil((8 + json.length) / 8) * 8 - 8;
  const out = new Uint8Array(8 + headerLength + offset);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, headerLength % 4294967296, true);
  dv.setUint32(4, Math.floor(headerLength / 4294967296), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength);
  let at = 8 + headerLength;
  for (const [, t] of entries) {
    writeData(t, out, at);
    at += storedByteLength(t);
  }
  return out;
}
