import { parseSafetensors, serializeSafetensors } from '@poad/hf-files';

// Plain-data state (e.g. a trainer checkpoint: numbers, strings, nested objects and
// Float32Arrays) as a small JSON text plus one safetensors file for the arrays, so large
// optimiser moments stay binary and exact. state-file.ts writes the pair into a folder; a browser
// puts it into a download.

const MARK = '$tensor';

/** `value` as JSON text (arrays replaced by references) and the safetensors bytes of its arrays. */
export function encodeState(value: unknown): { json: string; safetensors: Uint8Array } {
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  const json = JSON.stringify(value, (key, v: unknown) => {
    if (v instanceof Float32Array) {
      const id = `t${tensors.size}`;
      tensors.set(id, { shape: [v.length], data: v });
      return { [MARK]: id };
    }
    if (ArrayBuffer.isView(v)) {
      throw new TypeError(
        `encodeState: ${key} is a ${v.constructor.name}; only Float32Array is stored in binary`,
      );
    }
    return v;
  });
  return { json, safetensors: serializeSafetensors(tensors) };
}

/** Reads what {@link encodeState} gave; `names` name the two sources in error messages. */
export function decodeState<T>(
  json: string,
  safetensors: Uint8Array,
  names: { json: string; safetensors: string } = {
    json: 'state.json',
    safetensors: 'state.safetensors',
  },
): T {
  const { tensors } = parseSafetensors(safetensors, { fileName: names.safetensors });
  const reviver = (_key: string, v: unknown) => {
    if (v && typeof v === 'object' && MARK in v) {
      const t = tensors.get((v as Record<string, string>)[MARK]!);
      if (!t)
        throw new Error(
          `${names.safetensors}: missing tensor ${(v as Record<string, string>)[MARK]}`,
        );
      return Float32Array.from(t.data);
    }
    return v;
  };
  try {
    return JSON.parse(json, reviver) as T;
  } catch (err) {
    if (err instanceof SyntaxError)
      throw new Error(`${names.json}: not valid JSON (${err.message})`);
    throw err;
  }
}
