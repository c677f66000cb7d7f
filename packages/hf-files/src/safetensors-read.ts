import { DTYPE_BYTES, type DType } from './dtype.js';
import { CheckpointError } from './errors.js';
import { decodeBfloat16, decodeFloat16 } from './half.js';
import {
  checkHeaderLength,
  DEFAULT_MAX_HEADER_BYTES,
  parseHeaderBytes,
  type SafetensorsEntry,
} from './safetensors-header.js';

/** A tensor read from a file. `data` holds float32 values whatever the stored dtype. */
export interface NamedTensor {
  /** The dtype the file stored; `data` is always float32. */
  dtype: DType;
  /** Dimensions, outermost first (C order; linear weights are [out, in]). */
  shape: number[];
  /**
   * Values in C order, converted to float32: exact for F32, F16 and BF16 (and for integers up to
   * 2^24 in magnitude), rounded for F64 and larger integers; BOOL reads as 0 or 1.
   */
  data: Float32Array;
  /**
   * With {@link ParseSafetensorsOptions.halfBits}, for F16 and BF16 tensors: the stored 16-bit
   * values as the file holds them, and `data` is decoded from them only when first read (a
   * caller that uploads the 16 bits as they are never makes the float32 copy, twice their size).
   */
  bits?: Uint16Array;
}

/** Options for {@link parseSafetensors} and {@link readSafetensorsFile}. */
export interface ParseSafetensorsOptions {
  /** Name used in error messages (defaults to `"<bytes>"` or the path). */
  fileName?: string;
  /** Largest accepted JSON header in bytes (default 100 000 000, as the reference). */
  maxHeaderBytes?: number;
  /**
   * Keep F16 and BF16 tensors as their 16-bit values (`bits`), decoding `data` on first use
   * (default false: `data` decoded at once, no `bits`).
   */
  halfBits?: boolean;
}

/**
 * The tensor read from `raw` (stored as `dtype`): `data` decoded at once, or, for F16 and BF16
 * with `halfBits`, the 16-bit values in `bits` and `data` decoded when first read. `owned` as
 * for {@link decodeTensorData}.
 */
export function namedTensor(
  dtype: DType,
  shape: number[],
  raw: Uint8Array,
  halfBits = false,
  owned = false,
): NamedTensor {
  if (!halfBits || (dtype !== 'F16' && dtype !== 'BF16')) {
    return { dtype, shape, data: decodeTensorData(dtype, raw, owned) };
  }
  const whole = owned && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
  const buffer = whole ? raw.buffer : raw.slice().buffer;
  let bits = new Uint16Array(buffer);
  if (!LITTLE_ENDIAN) {
    const dv = new DataView(buffer);
    bits = Uint16Array.from({ length: bits.length }, (_, i) => dv.getUint16(2 * i, true));
  }
  let decoded: Float32Array | undefined;
  const t: NamedTensor = {
    dtype,
    shape,
    bits,
    get data(): Float32Array {
      if (!decoded) {
        decoded = new Float32Array(bits.length);
        if (dtype === 'F16') decodeFloat16(bits, decoded);
        else decodeBfloat16(bits, decoded);
      }
      return decoded;
    },
  };
  return t;
}

/** The contents of a safetensors file. */
export interface SafetensorsContents {
  /** Tensors by name, in the order they are laid out in the file. */
  tensors: Map<string, NamedTensor>;
  /** The `__metadata__` map (empty when absent). */
  metadata: Record<string, string>;
}

/** True on little-endian hosts, where typed arrays read safetensors data directly. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Convert one tensor's stored bytes to float32. `bytes` may start at any alignment. The result
 * never aliases `bytes`, unless `owned` is true and `bytes` spans its whole buffer (then an F32
 * tensor reuses that buffer instead of copying it).
 */
export function decodeTensorData(dtype: DType, bytes: Uint8Array, owned = false): Float32Array {
  const numel = bytes.length / DTYPE_BYTES[dtype];
  const out = new Float32Array(numel);
  if (!LITTLE_ENDIAN) {
    decodeWithDataView(dtype, bytes, out);
    return out;
  }
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const copy = owned && whole ? bytes.buffer : bytes.slice().buffer;
  switch (dtype) {
    case 'F32':
      return new Float32Array(copy);
    case 'F16':
      decodeFloat16(new Uint16Array(copy), out);
      return out;
    case 'BF16':
      decodeBfloat16(new Uint16Array(copy), out);
      return out;
    case 'F64':
      out.set(new Float64Array(copy));
      return out;
    case 'I64': {
      const src = new BigInt64Array(copy);
      for (let i = 0; i < numel; i++) out[i] = Number(src[i]!);
      return out;
    }
    case 'I32':
      out.set(new Int32Array(copy));
      return out;
    case 'I16':
      out.set(new Int16Array(copy));
      return out;
    case 'I8':
      out.set(new Int8Array(copy));
      return out;
    case 'U8':
      out.set(bytes);
      return out;
    case 'BOOL':
      for (let i = 0; i < numel; i++) out[i] = bytes[i] === 0 ? 0 : 1;
      return out;
  }
}

function decodeWithDataView(dtype: DType, bytes: Uint8Array, out: Float32Array): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = out.length;
  const u16 = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    switch (dtype) {
      case 'F32':
        out[i] = dv.getFloat32(i * 4, true);
        break;
      case 'F16':
      case 'BF16':
        u16[i] = dv.getUint16(i * 2, true);
        break;
      case 'F64':
        out[i] = dv.getFloat64(i * 8, true);
        break;
      case 'I64':
        out[i] = Number(dv.getBigInt64(i * 8, true));
        break;
      case 'I32':
        out[i] = dv.getInt32(i * 4, true);
        break;
      case 'I16':
        out[i] = dv.getInt16(i * 2, true);
        break;
      case 'I8':
        out[i] = dv.getInt8(i);
        break;
      case 'U8':
        out[i] = dv.getUint8(i);
        break;
      case 'BOOL':
        out[i] = dv.getUint8(i) === 0 ? 0 : 1;
        break;
    }
  }
  if (dtype === 'F16') decodeFloat16(u16, out);
  if (dtype === 'BF16') decodeBfloat16(u16, out);
}

/** Validate a whole in-memory safetensors file and return its header (no tensor data decoded). */
export function parseSafetensorsHeader(
  bytes: Uint8Array,
  options: ParseSafetensorsOptions = {},
): { entries: SafetensorsEntry[]; metadata: Record<string, string>; dataOffset: number } {
  const file = options.fileName ?? '<bytes>';
  if (!(bytes instanceof Uint8Array)) {
    throw new CheckpointError('invalid_tensor', file, 'expected the file contents as a Uint8Array');
  }
  const n = checkHeaderLength(
    bytes,
    bytes.length,
    file,
    options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
  );
  return parseHeaderBytes(bytes.subarray(8, 8 + n), bytes.length - 8 - n, file);
}

/**
 * Parse a safetensors file held in memory. The header is validated in full before any tensor
 * memory is allocated, so a hostile file costs at most its own size to reject. Every failure is a
 * {@link CheckpointError} naming the file and, where one is involved, the tensor.
 */
export function parseSafetensors(
  bytes: Uint8Array,
  options: ParseSafetensorsOptions = {},
): SafetensorsContents {
  const { entries, metadata, dataOffset } = parseSafetensorsHeader(bytes, options);
  const tensors = new Map<string, NamedTensor>();
  for (const e of entries) {
    const raw = bytes.subarray(dataOffset + e.begin, dataOffset + e.end);
    tensors.set(e.name, namedTensor(e.dtype, e.shape, raw, options.halfBits));
  }
  return { tensors, metadata };
}
