/** Element types a safetensors file may store and this package reads. */
export type DType = 'F32' | 'F16' | 'BF16' | 'F64' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

/** Element types this package writes: float32 by default, or a 16-bit float on request. */
export type StoreDType = 'F32' | 'F16' | 'BF16';

/** Bytes per element of each readable dtype. */
export const DTYPE_BYTES: Readonly<Record<DType, number>> = Object.freeze({
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
});

/** Every readable dtype, in the order the format's documentation lists them. */
export const DTYPES: readonly DType[] = Object.freeze(Object.keys(DTYPE_BYTES) as DType[]);

/** True when `s` is one of the readable dtype names. */
export function isDType(s: unknown): s is DType {
  return typeof s === 'string' && Object.hasOwn(DTYPE_BYTES, s);
}
