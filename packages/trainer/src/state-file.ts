import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSafetensors, serializeSafetensors } from '@poad/hf-files';
import { writeFileAtomicSync } from '@poad/run-kit';

// Plain-data state (e.g. a trainer checkpoint: numbers, strings, nested objects and
// Float32Arrays) saved as a small JSON file plus one safetensors file for the arrays, so large
// optimiser moments stay binary and exact.

const MARK = '$tensor';

/** Writes `value` as `<name>.json` + `<name>.safetensors` in `dir`. */
export function writeState(dir: string, name: string, value: unknown): void {
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  const json = JSON.stringify(value, (key, v: unknown) => {
    if (v instanceof Float32Array) {
      const id = `t${tensors.size}`;
      tensors.set(id, { shape: [v.length], data: v });
      return { [MARK]: id };
    }
    if (ArrayBuffer.isView(v)) {
      throw new TypeError(
        `writeState: ${key} is a ${v.constructor.name}; only Float32Array is stored in binary`,
      );
    }
    return v;
  });
  writeFileAtomicSync(join(dir, `${name}.safetensors`), serializeSafetensors(tensors));
  writeFileAtomicSync(join(dir, `${name}.json`), json);
}

/** Reads what {@link writeState} wrote. */
export function readState<T>(dir: string, name: string): T {
  const file = join(dir, `${name}.safetensors`);
  const { tensors } = parseSafetensors(new Uint8Array(readFileSync(file)), { fileName: file });
  const jsonFile = join(dir, `${name}.json`);
  const text = readFileSync(jsonFile, 'utf8');
  const reviver = (_key: string, v: unknown) => {
    if (v && typeof v === 'object' && MARK in v) {
      const t = tensors.get((v as Record<string, string>)[MARK]!);
      if (!t) throw new Error(`${file}: missing tensor ${(v as Record<string, string>)[MARK]}`);
      return Float32Array.from(t.data);
    }
    return v;
  };
  try {
    return JSON.parse(text, reviver) as T;
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error(`${jsonFile}: not valid JSON (${err.message})`);
    throw err;
  }
}
