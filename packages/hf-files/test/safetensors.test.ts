import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckpointError, type CheckpointErrorCode } from '../src/errors.js';
import { parseSafetensors, parseSafetensorsHeader } from '../src/safetensors-read.js';
import { serializeSafetensors, type TensorInput } from '../src/safetensors-write.js';
import { f32Bits } from './test-helpers.js';

/** Assemble a safetensors file from a header (object or raw text) and a data section. */
function build(
  header: unknown,
  data: Uint8Array = new Uint8Array(0),
  lengthField?: bigint,
): Uint8Array {
  const text = typeof header === 'string' ? header : JSON.stringify(header);
  const json = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, lengthField ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function expectError(
  fn: () => unknown,
  code: CheckpointErrorCode,
  tensor?: string,
): CheckpointError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CheckpointError);
    const err = e as CheckpointError;
    expect(err.code, err.message).toBe(code);
    expect(err.file).toBe('x.safetensors');
    expect(err.message).toContain('x.safetensors');
    if (tensor !== undefined) {
      expect(err.tensor).toBe(tensor);
      expect(err.message).toContain(tensor);
    }
    return err;
  }
  throw new Error(`expected a CheckpointError with code ${code}`);
}

const opts = { fileName: 'x.safetensors' };
const parse = (b: Uint8Array, maxHeaderBytes?: number) =>
  parseSafetensors(b, maxHeaderBytes === undefined ? opts : { ...opts, maxHeaderBytes });

describe('parseSafetensors on hand-built files', () => {
  it('reads a little-endian F32 tensor, metadata and an unaligned data section', () => {
    const data = new Uint8Array(new Float32Array([1.5, -2, 0.25]).buffer);
    const file = build(
      {
        __metadata__: { format: 'pt', k: 'v' },
        w: { dtype: 'F32', shape: [3], data_offsets: [0, 12] },
      },
      data,
    );
    expect((8 + (file.length - 8 - 12)) % 4).not.toBe(0); // the data really is unaligned
    const { tensors, metadata } = parse(file);
    expect(metadata).toEqual({ format: 'pt', k: 'v' });
    expect(tensors.get('w')).toEqual({
      dtype: 'F32',
      shape: [3],
      data: new Float32Array([1.5, -2, 0.25]),
    });
  });

  it('converts F16, BF16, F64, integer and BOOL tensors to float32', () => {
    const bytes = [
      0x00,
      0x3c,
      0x00,
      0xc0,
      0x01,
      0x00, // F16: 1, -2, 2^-24
      0x80,
      0x3f,
      0x49,
      0xc0, // BF16: 1, -3.140625
      ...new Uint8Array(new Float64Array([0.1]).buffer), // F64
      ...new Uint8Array(new BigInt64Array([-5n]).buffer), // I64
      0xff,
      0x07,
      0x02, // I8 -1, 7; U8 2
      0x00,
      0x02, // BOOL false, true (any non-zero byte)
    ];
    const file = build(
      {
        h: { dtype: 'F16', shape: [3], data_offsets: [0, 6] },
        b: { dtype: 'BF16', shape: [2], data_offsets: [6, 10] },
        d: { dtype: 'F64', shape: [1], data_offsets: [10, 18] },
        l: { dtype: 'I64', shape: [1], data_offsets: [18, 26] },
        i: { dtype: 'I8', shape: [2], data_offsets: [26, 28] },
        u: { dtype: 'U8', shape: [], data_offsets: [28, 29] },
        m: { dtype: 'BOOL', shape: [2], data_offsets: [29, 31] },
      },
      new Uint8Array(bytes),
    );
    const t = parse(file).tensors;
    expect(Array.from(t.get('h')!.data)).toEqual([1, -2, 2 ** -24]);
    expect(Array.from(t.get('b')!.data)).toEqual([1, -3.140625]);
    expect(Array.from(t.get('d')!.data)).toEqual([Math.fround(0.1)]);
    expect(Array.from(t.get('l')!.data)).toEqual([-5]);
    expect(Array.from(t.get('i')!.data)).toEqual([-1, 7]);
    expect(t.get('u')).toMatchObject({ dtype: 'U8', shape: [], data: new Float32Array([2]) });
    expect(Array.from(t.get('m')!.data)).toEqual([0, 1]);
  });

  it('halfBits keeps F16 and BF16 as their 16 bits and decodes data only when it is read', () => {
    const bytes = [0x00, 0x3c, 0x00, 0xc0, 0x80, 0x3f, 0x49, 0xc0, 0x00, 0x00, 0x80, 0x3f];
    const file = build(
      {
        h: { dtype: 'F16', shape: [2], data_offsets: [0, 4] },
        b: { dtype: 'BF16', shape: [1, 2], data_offsets: [4, 8] },
        f: { dtype: 'F32', shape: [1], data_offsets: [8, 12] },
      },
      new Uint8Array(bytes),
    );
    const t = parseSafetensors(file, { halfBits: true }).tensors;
    expect(Array.from(t.get('h')!.bits!)).toEqual([0x3c00, 0xc000]);
    expect(Array.from(t.get('b')!.bits!)).toEqual([0x3f80, 0xc049]);
    expect(t.get('f')!.bits).toBeUndefined();
    expect(Array.from(t.get('f')!.data)).toEqual([1]);
    // Not decoded yet: the getter is still there; reading it gives the eager decoding's values.
    expect(Object.getOwnPropertyDescriptor(t.get('b')!, 'data')?.get).toBeTypeOf('function');
    const eager = parse(file).tensors;
    for (const k of ['h', 'b']) {
      expect(Array.from(t.get(k)!.data)).toEqual(Array.from(eager.get(k)!.data));
      expect(t.get(k)!.data).toBe(t.get(k)!.data); // decoded once
      expect(eager.get(k)!.bits).toBeUndefined();
    }
    // The bits do not alias the file's bytes.
    file[file.length - 12] = 0xff;
    expect(t.get('h')!.bits![0]).toBe(0x3c00);
  });

  it('accepts space padding, zero-sized tensors and names like __proto__', () => {
    const file = build(
      '{"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
        '"e":{"dtype":"F16","shape":[0,5],"data_offsets":[4,4]},' +
        '"__metadata__":{"__proto__":"x"}}     ',
      new Uint8Array(4),
    );
    const t = parse(file).tensors;
    expect([...t.keys()].sort()).toEqual(['__proto__', 'e']);
    expect(t.get('e')!.data.length).toBe(0);
    const { metadata } = parse(file);
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.keys(metadata)).toEqual(['__proto__']);
  });

  it('returns copies, not views of the input', () => {
    const file = serializeSafetensors({ a: { shape: [2], data: new Float32Array([1, 2]) } });
    const { tensors } = parseSafetensors(file);
    file.fill(0);
    expect(Array.from(tensors.get('a')!.data)).toEqual([1, 2]);
  });
});

describe('parseSafetensors rejects bad files with typed errors', () => {
  const one = { w: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } };
  const eight = new Uint8Array(8);

  it('too short for the length field', () => {
    expectError(() => parse(new Uint8Array(5)), 'truncated');
  });
  it('hostile header lengths, before allocating anything', () => {
    for (const n of [2n ** 53n, 2n ** 64n - 1n, 2n ** 32n, 100_000_001n]) {
      const err = expectError(() => parse(build(one, eight, n)), 'hostile_header');
      expect(err.message).toContain(n.toString());
    }
    expectError(() => parse(build(one, eight), 10), 'hostile_header');
    expectError(() => parse(build(one, eight), Number.NaN), 'invalid_config');
  });
  it('a header length past the end of the file', () => {
    expectError(() => parse(build(one, eight, 5000n)), 'truncated');
  });
  it('a data section shorter than the offsets', () => {
    expectError(() => parse(build(one, new Uint8Array(6))), 'truncated', 'w');
  });
  it('bytes left over after the last tensor', () => {
    expectError(() => parse(build(one, new Uint8Array(12))), 'corrupt');
  });
  it('a header that is not a JSON object', () => {
    expectError(() => parse(build('[1,2]')), 'corrupt');
    expectError(() => parse(build('{"a":')), 'corrupt');
    expectError(() => parse(build(' {}')), 'corrupt');
    expectError(() => parse(build('{}', undefined, 1n)), 'corrupt');
  });
  it('invalid UTF-8 in the header', () => {
    const file = build('{"a":"xx"}');
    file[14] = 0xff;
    expectError(() => parse(file), 'corrupt');
  });
  it('duplicate tensor names', () => {
    const text =
      '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}';
    expectError(() => parse(build(text, eight)), 'corrupt', 'w');
  });
  it('an unknown dtype', () => {
    const h = { w: { dtype: 'F8_E4M3', shape: [8], data_offsets: [0, 8] } };
    expectError(() => parse(build(h, eight)), 'unsupported_dtype', 'w');
    expectError(() => parse(build({ w: { ...h.w, dtype: 3 } }, eight)), 'corrupt', 'w');
  });
  it('shapes that are not lists of non-negative integers', () => {
    for (const shape of [[-2], [2.5], ['2'], 2, null, [2 ** 60, 2 ** 60]]) {
      expectError(
        () => parse(build({ w: { dtype: 'F32', shape, data_offsets: [0, 8] } }, eight)),
        'corrupt',
        'w',
      );
    }
  });
  it('malformed or reversed offsets', () => {
    for (const data_offsets of [[0], [0, 8, 9], [-1, 7], [0.5, 8], [8, 0], '0,8']) {
      expectError(
        () => parse(build({ w: { dtype: 'F32', shape: [2], data_offsets } }, eight)),
        'corrupt',
        'w',
      );
    }
  });
  it('shape × dtype size that disagrees with the byte range', () => {
    expectError(
      () => parse(build({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, eight)),
      'corrupt',
      'w',
    );
    expectError(
      () => parse(build({ w: { dtype: 'F16', shape: [2], data_offsets: [0, 8] } }, eight)),
      'corrupt',
      'w',
    );
  });
  it('overlapping tensors and holes', () => {
    const overlap = {
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] },
    };
    expectError(() => parse(build(overlap, eight)), 'corrupt', 'b');
    const hole = {
      a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
      b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] },
    };
    expectError(() => parse(build(hole, new Uint8Array(12))), 'corrupt', 'b');
  });
  it('non-string metadata', () => {
    expectError(() => parse(build({ __metadata__: { step: 3 } })), 'corrupt');
    expectError(() => parse(build({ __metadata__: ['a'] })), 'corrupt');
  });
  it('an entry that is not an object', () => {
    expectError(() => parse(build({ w: [1] })), 'corrupt', 'w');
  });
});

describe('serializeSafetensors', () => {
  it('sorts names, pads the header to 8 bytes and always writes format pt', () => {
    const file = serializeSafetensors(
      new Map([
        ['b', { shape: [1], data: new Float32Array([2]) }],
        ['a', { shape: [1, 2], data: new Float32Array([0, 1]) }],
      ]),
      { format: 'np', note: 'x' },
    );
    const n = Number(new DataView(file.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
    expect(header.__metadata__).toEqual({ format: 'pt', note: 'x' });
    expect(header.a).toEqual({ dtype: 'F32', shape: [1, 2], data_offsets: [0, 8] });
    expect(header.b).toEqual({ dtype: 'F32', shape: [1], data_offsets: [8, 12] });
    expect(Array.from(new Float32Array(file.slice(8 + n).buffer))).toEqual([0, 1, 2]);
    expect(parseSafetensorsHeader(file).entries.map((e) => e.name)).toEqual(['a', 'b']);
  });

  it('rejects inconsistent tensors with typed errors', () => {
    const bad: Record<string, TensorInput>[] = [
      { t: { shape: [3], data: new Float32Array(2) } },
      { t: { shape: [-1], data: new Float32Array(0) } },
      { t: { shape: [1], data: [1] as unknown as Float32Array } },
      { t: { shape: [1], data: new Float32Array(1), storeAs: 'I8' as 'F32' } },
      { '': { shape: [1], data: new Float32Array(1) } },
      { __metadata__: { shape: [1], data: new Float32Array(1) } },
    ];
    for (const tensors of bad) {
      expect(() => serializeSafetensors(tensors)).toThrow(CheckpointError);
    }
    expect(() => serializeSafetensors({}, { a: 1 as unknown as string })).toThrow(CheckpointError);
  });

  it('writes from a subarray view without touching neighbouring memory', () => {
    const backing = new Float32Array([9, 1, 2, 9]);
    const file = serializeSafetensors({ v: { shape: [2], data: backing.subarray(1, 3) } });
    expect(Array.from(parseSafetensors(file).tensors.get('v')!.data)).toEqual([1, 2]);
  });
});

describe('round trip (property)', () => {
  const name = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s !== '__metadata__');
  const tensor = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }).chain((shape) => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fc.record({
      shape: fc.constant(shape),
      data: fc.float32Array({ minLength: n, maxLength: n }),
    });
  });
  const files = fc.record({
    tensors: fc.dictionary(name, tensor, { maxKeys: 6 }),
    metadata: fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
  });

  it('serialize → parse is bit-exact (NaN payloads included)', () => {
    fc.assert(
      fc.property(files, ({ tensors, metadata }) => {
        const { tensors: back, metadata: meta } = parseSafetensors(
          serializeSafetensors(tensors, metadata),
        );
        expect(meta).toEqual({ ...metadata, format: 'pt' });
        expect([...back.keys()].sort()).toEqual(Object.keys(tensors).sort());
        for (const [k, t] of Object.entries(tensors)) {
          const got = back.get(k)!;
          expect(got.dtype).toBe('F32');
          expect(got.shape).toEqual(t.shape);
          expect(f32Bits(got.data)).toEqual(f32Bits(t.data));
        }
      }),
      { numRuns: 300, seed: 21 },
    );
  });

  it('parse → serialize → parse keeps F16 and BF16 values exactly', () => {
    fc.assert(
      fc.property(fc.float32Array({ maxLength: 40 }), (x) => {
        for (const storeAs of ['F16', 'BF16'] as const) {
          const first = parseSafetensors(
            serializeSafetensors({ x: { shape: [x.length], data: x, storeAs } }),
          );
          const t = first.tensors.get('x')!;
          expect(t.dtype).toBe(storeAs);
          const again = parseSafetensors(
            serializeSafetensors({ x: { ...t, storeAs } }),
          ).tensors.get('x')!;
          expect(f32Bits(again.data)).toEqual(f32Bits(t.data));
        }
      }),
      { numRuns: 200, seed: 22 },
    );
  });
});
