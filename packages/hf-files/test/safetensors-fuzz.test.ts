import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../src/errors.js';
import { readSafetensorsFile } from '../src/safetensors-file.js';
import { parseSafetensors, type SafetensorsContents } from '../src/safetensors-read.js';
import { serializeSafetensors } from '../src/safetensors-write.js';
import { withTempDir } from './test-helpers.js';

/**
 * Parse and classify the outcome: the only allowed failure is a CheckpointError, and a success
 * can never hold more float32 bytes than 4× the input (U8/BOOL widen 1 → 4 bytes, the worst case).
 */
function outcome(bytes: Uint8Array): 'ok' | 'rejected' {
  let result: SafetensorsContents;
  try {
    result = parseSafetensors(bytes, { fileName: 'fuzz.safetensors' });
  } catch (e) {
    if (!(e instanceof CheckpointError)) throw e;
    expect(e.file).toBe('fuzz.safetensors');
    return 'rejected';
  }
  let floats = 0;
  for (const t of result.tensors.values()) {
    floats += t.data.length;
    expect(t.data.length).toBe(t.shape.reduce((a, b) => a * b, 1));
  }
  expect(floats * 4).toBeLessThanOrEqual(bytes.length * 4);
  return 'ok';
}

function withLength(n: bigint, rest: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + rest.length);
  new DataView(out.buffer).setBigUint64(0, n, true);
  out.set(rest, 8);
  return out;
}

const validFile = fc
  .dictionary(
    fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s !== '__metadata__'),
    fc.record({
      shape: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
      storeAs: fc.constantFrom('F32' as const, 'F16' as const, 'BF16' as const),
    }),
    { maxKeys: 5 },
  )
  .map((spec) => {
    const tensors = Object.fromEntries(
      Object.entries(spec).map(([k, { shape, storeAs }]) => {
        const n = shape.reduce((a, b) => a * b, 1);
        return [k, { shape, storeAs, data: new Float32Array(n).map((_, i) => i - 1.5) }];
      }),
    );
    return serializeSafetensors(tensors, { note: 'fuzz' });
  });

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: fc.nat(),
    bit: fc.integer({ min: 0, max: 7 }),
  }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.integer({ min: 0, max: 255 }),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant('length' as const),
    value: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 400n })),
  }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(file: Uint8Array, muts: Mutation[]): Uint8Array {
  let b = file.slice();
  for (const m of muts) {
    if (b.length === 0) break;
    switch (m.kind) {
      case 'flip':
        b[m.at % b.length]! ^= 1 << m.bit;
        break;
      case 'set':
        b[m.at % b.length] = m.value;
        break;
      case 'truncate':
        b = b.slice(0, m.at % b.length);
        break;
      case 'insert': {
        const at = m.at % b.length;
        b = new Uint8Array([...b.subarray(0, at), ...m.bytes, ...b.subarray(at)]);
        break;
      }
      case 'length':
        if (b.length >= 8) new DataView(b.buffer).setBigUint64(0, m.value, true);
        break;
    }
  }
  return b;
}

describe('safetensors reader fuzzing', () => {
  it('random bytes are rejected with a CheckpointError, never a crash', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(outcome(bytes)).toBe('rejected');
      }),
      { numRuns: 500, seed: 31 },
    );
  });

  it('random bodies behind a plausible header length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), (rest, k) => {
        outcome(withLength(BigInt(k % (rest.length + 1)), rest));
      }),
      { numRuns: 500, seed: 32 },
    );
  });

  it('valid files stay readable and mutated ones fail cleanly', () => {
    let ok = 0;
    let rejected = 0;
    fc.assert(
      fc.property(validFile, fc.array(mutation, { maxLength: 3 }), (file, muts) => {
        expect(outcome(file)).toBe('ok');
        if (outcome(mutate(file, muts)) === 'ok') ok += 1;
        else rejected += 1;
      }),
      { numRuns: 600, seed: 33 },
    );
    // Both branches were exercised (flips inside tensor data keep a file valid).
    expect(ok).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });

  it('random header JSON with hostile shapes and offsets is rejected or read consistently', () => {
    const num = fc.oneof(
      fc.integer({ min: -2, max: 40 }),
      fc.constantFrom(2 ** 31, 2 ** 32, 2 ** 53, 2 ** 60, 1e308, 0.5, -0),
    );
    const entry = fc.record({
      dtype: fc.constantFrom('F32', 'F16', 'BF16', 'U8', 'BOOL', 'I64', 'F8_E5M2', 'f32', ''),
      shape: fc.array(num, { maxLength: 4 }),
      data_offsets: fc.array(num, { minLength: 0, maxLength: 3 }),
    });
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(entry, fc.jsonValue()), { maxKeys: 4 }),
        fc.uint8Array({ maxLength: 64 }),
        (header, data) => {
          const json = new TextEncoder().encode(JSON.stringify(header));
          const file = new Uint8Array([...withLength(BigInt(json.length), json), ...data]);
          outcome(file);
        },
      ),
      { numRuns: 500, seed: 34 },
    );
  });

  it('hostile header lengths are refused before any allocation', () => {
    const before = process.memoryUsage().arrayBuffers;
    for (const n of [
      2n ** 53n,
      2n ** 53n + 1n,
      2n ** 63n,
      2n ** 64n - 1n,
      100_000_001n,
      99_999_999n,
    ]) {
      expect(outcome(withLength(n, new Uint8Array(16)))).toBe('rejected');
    }
    // A header claiming a 2^40-element tensor backed by 8 bytes is rejected by arithmetic alone.
    const json = new TextEncoder().encode(
      JSON.stringify({ w: { dtype: 'F32', shape: [2 ** 20, 2 ** 20], data_offsets: [0, 8] } }),
    );
    expect(
      outcome(new Uint8Array([...withLength(BigInt(json.length), json), ...new Uint8Array(8)])),
    ).toBe('rejected');
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 << 20);
  });

  it('absurdly nested JSON gives a typed error, not a stack overflow', () => {
    const deep = `${'['.repeat(300_000)}${']'.repeat(300_000)}`;
    for (const text of [
      deep,
      `{"a":{"dtype":"F32","shape":${deep},"data_offsets":[0,0]}}`,
      `{"a":{"dtype":${deep},"shape":[],"data_offsets":[0,4]}}`,
      `{"__metadata__":{"k":${deep}}}`,
    ]) {
      const json = new TextEncoder().encode(text);
      expect(outcome(withLength(BigInt(json.length), json))).toBe('rejected');
    }
  });

  it('the file reader refuses a hostile length field without reading the rest', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'h.safetensors');
      await writeFile(path, withLength(2n ** 53n, new Uint8Array(32)));
      await expect(readSafetensorsFile(path)).rejects.toMatchObject({
        code: 'hostile_header',
        file: path,
      });
      await writeFile(path, withLength(40n, new Uint8Array(32)));
      await expect(readSafetensorsFile(path)).rejects.toMatchObject({
        code: 'truncated',
        file: path,
      });
    });
  });

  it('the file reader agrees with the in-memory reader on mutated files', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'm.safetensors');
      await fc.assert(
        fc.asyncProperty(validFile, fc.array(mutation, { maxLength: 2 }), async (file, muts) => {
          const bytes = mutate(file, muts);
          await writeFile(path, bytes);
          let mem: unknown;
          try {
            mem = parseSafetensors(bytes, { fileName: path });
          } catch (e) {
            mem = e;
          }
          let disk: unknown;
          try {
            disk = await readSafetensorsFile(path);
          } catch (e) {
            disk = e;
          }
          if (mem instanceof Error) {
            expect(disk).toBeInstanceOf(CheckpointError);
            expect((disk as CheckpointError).code).toBe((mem as CheckpointError).code);
          } else {
            expect(disk).toEqual(mem);
          }
        }),
        { numRuns: 100, seed: 35 },
      );
    });
  });
});
