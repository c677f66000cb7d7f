import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bfloat16BitsToFloat32,
  decodeBfloat16,
  decodeFloat16,
  encodeBfloat16,
  encodeFloat16,
  float16BitsToFloat32,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from '../src/half.js';

const f32 = (x: number): number => Math.fround(x);
const bitsOf = (x: number): number => new Uint32Array(new Float32Array([x]).buffer)[0]!;

describe('F16 → float32 (hand-computed values)', () => {
  const cases: [number, number][] = [
    [0x0000, 0],
    [0x3c00, 1],
    [0xc000, -2],
    [0x3555, 0.333251953125], // 1365/4096
    [0x3bff, 0.99951171875], // 1 - 2^-11
    [0x7bff, 65504], // largest finite
    [0x0400, 2 ** -14], // smallest normal
    [0x0001, 2 ** -24], // smallest subnormal
    [0x03ff, 1023 * 2 ** -24], // largest subnormal
    [0x8001, -(2 ** -24)],
    [0x7c00, Number.POSITIVE_INFINITY],
    [0xfc00, Number.NEGATIVE_INFINITY],
  ];
  it.each(cases)('0x%s', (h, want) => {
    expect(float16BitsToFloat32(h)).toBe(want);
  });
  it('keeps the sign of zero and turns NaN patterns into NaN', () => {
    expect(Object.is(float16BitsToFloat32(0x8000), -0)).toBe(true);
    expect(float16BitsToFloat32(0x7e00)).toBeNaN();
    expect(float16BitsToFloat32(0x7c01)).toBeNaN();
    expect(float16BitsToFloat32(0xfe00)).toBeNaN();
    expect(bitsOf(float16BitsToFloat32(0x7e00))).toBe(0x7fc00000);
  });
  it('matches the closed-form value of every finite pattern', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const e = (h >>> 10) & 0x1f;
      if (e === 0x1f) continue;
      const m = h & 0x3ff;
      const mag = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
      const want = h & 0x8000 ? -mag : mag;
      if (!Object.is(float16BitsToFloat32(h), want)) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
  it('bulk decoding equals scalar decoding for all 65536 patterns', () => {
    const src = new Uint16Array(65536).map((_, i) => i);
    const out = new Float32Array(65536);
    decodeFloat16(src, out);
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      if (bitsOf(out[h]!) !== bitsOf(float16BitsToFloat32(h))) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
});

describe('BF16 → float32 (hand-computed values)', () => {
  const cases: [number, number][] = [
    [0x3f80, 1],
    [0xc049, -3.140625],
    [0x0080, 2 ** -126], // smallest normal float32
    [0x0001, 2 ** -133], // subnormal
    [0x7f7f, f32(3.3895313892515355e38)], // largest finite
    [0x7f80, Number.POSITIVE_INFINITY],
    [0xff80, Number.NEGATIVE_INFINITY],
  ];
  it.each(cases)('0x%s', (b, want) => {
    expect(bfloat16BitsToFloat32(b)).toBe(want);
  });
  it('reads NaN and negative zero', () => {
    expect(bfloat16BitsToFloat32(0x7fc0)).toBeNaN();
    expect(Object.is(bfloat16BitsToFloat32(0x8000), -0)).toBe(true);
  });
  it('bulk decoding is the top half of a float32', () => {
    const src = new Uint16Array(65536).map((_, i) => i);
    const out = new Float32Array(65536);
    decodeBfloat16(src, out);
    const bits = new Uint32Array(out.buffer);
    const wrong: number[] = [];
    for (let b = 0; b < 65536; b++) if (bits[b] !== b * 65536) wrong.push(b);
    expect(wrong).toEqual([]);
  });
});

describe('float32 → F16 (round to nearest, ties to even)', () => {
  const cases: [number, number][] = [
    [1 / 3, 0x3555],
    [65504, 0x7bff],
    [65519, 0x7bff], // below the halfway point to 65536
    [65520, 0x7c00], // halfway: ties to even = infinity
    [1e6, 0x7c00],
    [-1e6, 0xfc00],
    [2 ** -24, 0x0001],
    [2 ** -25, 0x0000], // halfway between 0 and 2^-24: even is 0
    [3 * 2 ** -25, 0x0002], // halfway between 1 and 2 ulps: even is 2
    [2 ** -26, 0x0000],
    [1023.5 * 2 ** -24, 0x0400], // largest subnormal + half ulp rounds up to the smallest normal
    [1 + 2 ** -11, 0x3c00], // tie, even mantissa stays
    [1 + 3 * 2 ** -11, 0x3c02], // tie, odd mantissa rounds up
    [1 + 2 ** -11 + 2 ** -20, 0x3c01], // just above the tie
    [Number.POSITIVE_INFINITY, 0x7c00],
    [Number.NEGATIVE_INFINITY, 0xfc00],
    [Number.NaN, 0x7e00],
  ];
  it.each(cases)('%s', (x, want) => {
    expect(float32ToFloat16Bits(x)).toBe(want);
  });
  it('keeps the sign of zero', () => {
    expect(float32ToFloat16Bits(-0)).toBe(0x8000);
    expect(float32ToFloat16Bits(-(2 ** -26))).toBe(0x8000);
  });
  it('round-trips every non-NaN F16 pattern', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      if ((h & 0x7fff) > 0x7c00) continue;
      if (float32ToFloat16Bits(float16BitsToFloat32(h)) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
  it('picks the nearest representable value (property)', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, min: -7e4, max: 7e4 }), (x) => {
        const h = float32ToFloat16Bits(x);
        const y = float16BitsToFloat32(h);
        if (!Number.isFinite(y)) return Math.abs(x) >= 65520;
        const err = Math.abs(y - x);
        // Neighbours one step away in either direction are no closer.
        for (const n of [h - 1, h + 1]) {
          if ((n & 0x7fff) >= 0x7c00 || n < 0 || n > 0xffff) continue;
          if ((n ^ h) & 0x8000) continue;
          expect(Math.abs(float16BitsToFloat32(n) - x)).toBeGreaterThanOrEqual(err);
        }
        return true;
      }),
      { numRuns: 2000, seed: 11 },
    );
  });
  it('bulk encoding equals scalar encoding', () => {
    fc.assert(
      fc.property(fc.float32Array({ maxLength: 64 }), (xs) => {
        const out = new Uint16Array(xs.length);
        encodeFloat16(xs, out);
        expect(Array.from(out)).toEqual(Array.from(xs, float32ToFloat16Bits));
      }),
      { numRuns: 200, seed: 12 },
    );
  });
});

describe('float32 → BF16 (round to nearest, ties to even)', () => {
  const cases: [number, number][] = [
    [1, 0x3f80],
    [1 + 2 ** -8, 0x3f80], // tie, even stays
    [1 + 3 * 2 ** -8, 0x3f82], // tie, odd rounds up
    [1 + 2 ** -8 + 2 ** -20, 0x3f81],
    [Math.PI, 0x4049],
    [-(2 ** -133), 0x8001],
    [f32(3.4028234663852886e38), 0x7f80], // largest float32 rounds to infinity
    [Number.NEGATIVE_INFINITY, 0xff80],
    [Number.NaN, 0x7fc0],
  ];
  it.each(cases)('%s', (x, want) => {
    expect(float32ToBfloat16Bits(x)).toBe(want);
  });
  it('round-trips every non-NaN BF16 pattern and agrees in bulk', () => {
    const xs = new Float32Array(65536);
    for (let b = 0; b < 65536; b++) xs[b] = bfloat16BitsToFloat32(b);
    const out = new Uint16Array(65536);
    encodeBfloat16(xs, out);
    const wrong: number[] = [];
    for (let b = 0; b < 65536; b++) {
      const want = (b & 0x7fff) > 0x7f80 ? 0x7fc0 : b;
      if (out[b] !== want || float32ToBfloat16Bits(xs[b]!) !== want) wrong.push(b);
    }
    expect(wrong).toEqual([]);
  });
  it('the error is at most half a BF16 ulp (property)', () => {
    fc.assert(
      fc.property(
        fc.float({
          noNaN: true,
          noDefaultInfinity: true,
          min: Math.fround(-1e38),
          max: Math.fround(1e38),
        }),
        (x) => {
          const y = bfloat16BitsToFloat32(float32ToBfloat16Bits(x));
          const bits = bitsOf(x) & 0x7fffffff;
          const ulp = bits < 0x00800000 ? 2 ** -133 : 2 ** ((bits >>> 23) - 127 - 7);
          expect(Math.abs(y - f32(x))).toBeLessThanOrEqual(ulp / 2);
        },
      ),
      { numRuns: 2000, seed: 13 },
    );
  });
});
