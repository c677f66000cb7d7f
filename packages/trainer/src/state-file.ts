import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '@poad/run-kit';
import { decodeState, encodeState } from './state-codec.js';

/** Writes `value` as `<name>.json` + `<name>.safetensors` in `dir` (see {@link encodeState}). */
export function writeState(dir: string, name: string, value: unknown): void {
  const { json, safetensors } = encodeState(value);
  writeFileAtomicSync(join(dir, `${name}.safetensors`), safetensors);
  writeFileAtomicSync(join(dir, `${name}.json`), json);
}

/** Reads what {@link writeState} wrote. */
export function readState<T>(dir: string, name: string): T {
  const file = join(dir, `${name}.safetensors`);
  const jsonFile = join(dir, `${name}.json`);
  const bytes = new Uint8Array(readFileSync(file));
  return decodeState<T>(readFileSync(jsonFile, 'utf8'), bytes, {
    json: jsonFile,
    safetensors: file,
  });
}
