import { DTYPE_BYTES, type DType, isDType } from './dtype.js';
import { CheckpointError } from './errors.js';

/** The reference implementation's cap on the JSON header, in bytes. */
export const DEFAULT_MAX_HEADER_BYTES = 100_000_000;

/** One tensor as the header describes it; offsets are relative to the start of the data section. */
export interface SafetensorsEntry {
  /** Tensor name. */
  name: string;
  /** Stored element type. */
  dtype: DType;
  /** Dimensions, outermost first (C order). */
  shape: number[];
  /** First byte of the tensor in the data section. */
  begin: number;
  /** One past the last byte of the tensor in the data section. */
  end: number;
}

/** A validated safetensors header. */
export interface SafetensorsHeader {
  /** Tensors in data-section order. */
  entries: SafetensorsEntry[];
  /** The `__metadata__` map (empty when absent). */
  metadata: Record<string, string>;
  /** Byte offset of the data section from the start of the file: 8 + header length. */
  dataOffset: number;
}

/**
 * Read the 8-byte little-endian header length and check it against the cap and the file size
 * before anything is allocated for the header.
 */
export function checkHeaderLength(
  prefix: Uint8Array,
  fileSize: number,
  file: string,
  maxHeaderBytes: number = DEFAULT_MAX_HEADER_BYTES,
): number {
  if (!(maxHeaderBytes >= 0)) {
    throw new CheckpointError(
      'invalid_config',
      file,
      `maxHeaderBytes must be a non-negative number, got ${maxHeaderBytes}`,
    );
  }
  if (fileSize < 8 || prefix.length < 8) {
    throw new CheckpointError(
      'truncated',
      file,
      `file is ${fileSize} bytes, shorter than the 8-byte header length field; the file is truncated or not a safetensors file`,
    );
  }
  const dv = new DataView(prefix.buffer, prefix.byteOffset, 8);
  const lo = dv.getUint32(0, true);
  const hi = dv.getUint32(4, true);
  const n = hi * 4294967296 + lo;
  if (hi !== 0 || n > maxHeaderBytes) {
    const shown = hi === 0 ? String(n) : (BigInt(hi) * 4294967296n + BigInt(lo)).toString();
    throw new CheckpointError(
      'hostile_header',
      file,
      `header length field says ${shown} bytes, above the cap of ${maxHeaderBytes}; the file is corrupt or hostile (raise maxHeaderBytes only for a file you trust)`,
    );
  }
  if (n < 2) {
    throw new CheckpointError(
      'corrupt',
      file,
      `header length ${n} is too small to hold a JSON object`,
    );
  }
  if (8 + n > fileSize) {
    throw new CheckpointError(
      'truncated',
      file,
      `header length ${n} runs past the end of the ${fileSize}-byte file; the file is truncated`,
    );
  }
  return n;
}

/** Top-level keys of a JSON object text in source order, duplicates included. */
function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22)
        j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (depth === 1 && expectKey) {
        keys.push(JSON.parse(text.slice(i, j + 1)) as string);
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth === 1) expectKey = true;
    } else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
    } else if (c === 0x2c && depth === 1) {
      expectKey = true;
    }
  }
  return keys;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** A short, always-printable rendering of a header value for error messages. */
function show(v: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    // Deeply nested values overflow JSON.stringify's recursion.
  }
  if (text === undefined) return Array.isArray(v) ? '[…]' : typeof v;
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The values of `source` as a fresh object of strings (a key such as `__proto__` stays an own
 * property); `notString(key)` is thrown for a value that is not a string.
 */
export function stringEntries(
  source: object,
  notString: (key: string) => Error,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) {
    if (typeof v !== 'string') throw notString(k);
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true });
  }
  return out;
}

/**
 * Parse and validate the JSON header: a UTF-8 object starting with `{`, no duplicate keys, string
 * metadata, known dtypes, non-negative integer shapes, offsets inside the data section whose
 * lengths equal shape × dtype size, and ranges that tile the data section exactly (no overlap, no
 * hole, nothing left over).
 */
export function parseHeaderBytes(
  headerBytes: Uint8Array,
  dataLength: number,
  file: string,
): SafetensorsHeader {
  try {
    return parseHeaderUnchecked(headerBytes, dataLength, file);
  } catch (e) {
    if (e instanceof CheckpointError) throw e;
    // Anything else (e.g. a stack overflow on absurdly nested JSON) is still a corrupt header.
    throw new CheckpointError(
      'corrupt',
      file,
      `header could not be processed: ${String(e)}`,
      undefined,
      {
        cause: e,
      },
    );
  }
}

function parseHeaderUnchecked(
  headerBytes: Uint8Array,
  dataLength: number,
  file: string,
): SafetensorsHeader {
  if (headerBytes[0] !== 0x7b) {
    throw new CheckpointError(
      'corrupt',
      file,
      'header does not start with "{"; this is not a safetensors file',
    );
  }
  let text: string;
  let parsed: unknown;
  try {
    text = decoder.decode(headerBytes);
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new CheckpointError('corrupt', file, 'header is not valid UTF-8 JSON', undefined, {
      cause,
    });
  }
  if (!isPlainObject(parsed)) {
    throw new CheckpointError('corrupt', file, 'header JSON is not an object');
  }
  const keys = topLevelKeys(text);
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k)) {
      throw new CheckpointError('corrupt', file, 'header names this tensor twice', k);
    }
    seen.add(k);
  }

  let metadata: Record<string, string> = {};
  const entries: SafetensorsEntry[] = [];
  for (const name of Object.keys(parsed)) {
    const info = parsed[name];
    if (name === '__metadata__') {
      if (!isPlainObject(info)) {
        throw new CheckpointError('corrupt', file, '__metadata__ must be an object of strings');
      }
      metadata = stringEntries(
        info,
        (k) => new CheckpointError('corrupt', file, `__metadata__ value of "${k}" is not a string`),
      );
      continue;
    }
    entries.push(parseEntry(name, info, dataLength, file));
  }

  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  for (const e of sorted) {
    if (e.begin < cursor) {
      throw new CheckpointError(
        'corrupt',
        file,
        `data range [${e.begin}, ${e.end}) overlaps another tensor`,
        e.name,
      );
    }
    if (e.begin > cursor) {
      throw new CheckpointError(
        'corrupt',
        file,
        `data bytes [${cursor}, ${e.begin}) before this tensor belong to no tensor (a hole)`,
        e.name,
      );
    }
    cursor = e.end;
  }
  if (cursor !== dataLength) {
    throw new CheckpointError(
      cursor < dataLength ? 'corrupt' : 'truncated',
      file,
      `tensors cover ${cursor} data bytes but the data section holds ${dataLength}`,
    );
  }
  return { entries: sorted, metadata, dataOffset: 8 + headerBytes.length };
}

function parseEntry(
  name: string,
  info: unknown,
  dataLength: number,
  file: string,
): SafetensorsEntry {
  if (!isPlainObject(info)) {
    throw new CheckpointError('corrupt', file, 'header entry is not an object', name);
  }
  const { dtype, shape, data_offsets: offsets } = info;
  if (!isDType(dtype)) {
    throw new CheckpointError(
      typeof dtype === 'string' ? 'unsupported_dtype' : 'corrupt',
      file,
      `dtype ${show(dtype)} is not one of ${Object.keys(DTYPE_BYTES).join(', ')}`,
      name,
    );
  }
  if (!Array.isArray(shape) || !shape.every(nonNegativeInt)) {
    throw new CheckpointError(
      'corrupt',
      file,
      `shape ${show(shape)} is not a list of non-negative integers`,
      name,
    );
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(nonNegativeInt)) {
    throw new CheckpointError(
      'corrupt',
      file,
      `data_offsets ${show(offsets)} is not a pair of non-negative integers`,
      name,
    );
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) {
    throw new CheckpointError(
      'corrupt',
      file,
      `data_offsets [${begin}, ${end}] are reversed`,
      name,
    );
  }
  if (end > dataLength) {
    throw new CheckpointError(
      'truncated',
      file,
      `data_offsets end ${end} lies past the ${dataLength}-byte data section; the file is truncated or corrupt`,
      name,
    );
  }
  let numel = 1;
  for (const d of shape as number[]) {
    numel *= d;
    if (numel > Number.MAX_SAFE_INTEGER) {
      throw new CheckpointError('corrupt', file, `shape ${show(shape)} is impossibly large`, name);
    }
  }
  const bytes = numel * DTYPE_BYTES[dtype];
  if (bytes !== end - begin) {
    throw new CheckpointError(
      'corrupt',
      file,
      `shape ${show(shape)} of ${dtype} needs ${bytes} bytes but data_offsets span ${end - begin}`,
      name,
    );
  }
  return { name, dtype, shape: [...(shape as number[])], begin, end };
}
