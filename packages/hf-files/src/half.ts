/**
 * IEEE binary16 (F16) and bfloat16 (BF16) conversions to and from float32, done on bit patterns so
 * that every value (subnormals, infinities, NaN payloads) converts exactly.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float32 bit pattern of each of the 65536 F16 bit patterns, built on first use. */
let f16Table: Uint32Array | undefined;

function buildF16Table(): Uint32Array {
  const table = new Uint32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    let bits: number;
    if (exp === 0x1f) {
      // Infinity or NaN: keep the payload in the top mantissa bits.
      bits = sign | 0x7f800000 | (mant << 13);
    } else if (exp !== 0) {
      bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant === 0) {
      bits = sign;
    } else {
      // Subnormal half: shift the mantissa up until its leading one reaches the hidden bit.
      let m = mant;
      let e = 113;
      while ((m & 0x400) === 0) {
        m <<= 1;
        e -= 1;
      }
      bits = sign | (e << 23) | ((m & 0x3ff) << 13);
    }
    table[h] = bits >>> 0;
  }
  return table;
}

function table(): Uint32Array {
  if (f16Table === undefined) f16Table = buildF16Table();
  return f16Table;
}

/** The float32 value of an F16 bit pattern (exact). */
export function float16BitsToFloat32(h: number): number {
  u32[0] = table()[h & 0xffff]!;
  return f32[0]!;
}

/** The float32 value of a BF16 bit pattern (exact: bfloat16 is the top half of a float32). */
export function bfloat16BitsToFloat32(b: number): number {
  u32[0] = (b & 0xffff) << 16;
  return f32[0]!;
}

/**
 * The F16 bit pattern nearest to `x` (rounded to float32 first), ties to even. Values at or above
 * 65520 in magnitude become infinity; NaN becomes the quiet NaN 0x7e00 with the sign kept.
 */
export function float32ToFloat16Bits(x: number): number {
  f32[0] = x;
  return f16FromFloat32Bits(u32[0]!);
}

function f16FromFloat32Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;
  if (abs >= 0x47800000) return sign | 0x7c00;
  if (abs < 0x38800000) {
    // Below the smallest normal half the result is a count of 2^-24 steps. The float32's
    // magnitude is m · 2^(e-150) (m with its hidden bit), so that count is m · 2^(e-126): a
    // product that is exact in a double, rounded to nearest, ties to even, below.
    const e = abs >>> 23;
    const m = e === 0 ? abs : (abs & 0x7fffff) | 0x800000;
    const v = m * 2 ** ((e === 0 ? 1 : e) - 126);
    let q = Math.floor(v);
    const frac = v - q;
    if (frac > 0.5 || (frac === 0.5 && (q & 1) === 1)) q += 1;
    return sign | q;
  }
  const exp = (abs >>> 23) - 112;
  const mant = abs & 0x7fffff;
  let half = (exp << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half += 1;
  return sign | half;
}

/**
 * The BF16 bit pattern nearest to `x` (rounded to float32 first), ties to even; NaN becomes
 * 0x7fc0.
 */
export function float32ToBfloat16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  if ((bits & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Convert a run of F16 bit patterns to float32 values. */
export function decodeFloat16(src: Uint16Array, out: Float32Array): void {
  const t = table();
  const o = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < src.length; i++) o[i] = t[src[i]!]!;
}

/** Convert a run of BF16 bit patterns to float32 values. */
export function decodeBfloat16(src: Uint16Array, out: Float32Array): void {
  const o = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < src.length; i++) o[i] = src[i]! << 16;
}

/** Convert float32 values to F16 bit patterns (round to nearest, ties to even). */
export function encodeFloat16(src: Float32Array, out: Uint16Array): void {
  const s = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < s.length; i++) out[i] = f16FromFloat32Bits(s[i]!);
}

/** Convert float32 values to BF16 bit patterns (round to nearest, ties to even). */
export function encodeBfloat16(src: Float32Array, out: Uint16Array): void {
  const s = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < s.length; i++) {
    const bits = s[i]!;
    out[i] =
      (bits & 0x7fffffff) > 0x7f800000
        ? 0x7fc0
        : ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
  }
}
