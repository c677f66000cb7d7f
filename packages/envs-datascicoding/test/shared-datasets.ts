import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type BuiltinDatasetName, type Dataset, loadDataset } from '../src/index.js';
import { PYTHON } from './helpers.js';

/** A dataset as it is kept on disk: plain arrays in place of its typed ones. */
interface PlainDataset extends Omit<Dataset, 'x' | 'y' | 'holdout'> {
  x: number[];
  y: number[];
}

const taken = new Map<BuiltinDatasetName, Promise<Dataset>>();

/**
 * A built-in dataset as `loadDataset` gives it, shared by the run's test files: read from the
 * run's folder (global-setup.ts) when an earlier file left it there, else loaded and left there.
 * Without that folder (a run without the global setup) it is simply loaded.
 */
export function builtinDataset(name: BuiltinDatasetName): Promise<Dataset> {
  let pending = taken.get(name);
  if (!pending) {
    pending = take(name);
    taken.set(name, pending);
  }
  return pending;
}

async function take(name: BuiltinDatasetName): Promise<Dataset> {
  const dir = inject('sharedDatasets');
  if (!dir) return loadDataset(name, PYTHON);
  const file = join(dir, `${name}.json`);
  let kept: PlainDataset | undefined;
  try {
    kept = JSON.parse(readFileSync(file, 'utf8')) as PlainDataset;
  } catch {
    // Not there yet: this file is the first to need it.
  }
  if (kept) return { ...kept, x: Float64Array.from(kept.x), y: Int32Array.from(kept.y) };
  const loaded = await loadDataset(name, PYTHON);
  const { x, y, holdout: _none, ...rest } = loaded;
  const plain: PlainDataset = { ...rest, x: Array.from(x), y: Array.from(y) };
  // Written whole, then renamed: a file loading at the same time reads all of it or nothing.
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(plain));
  renameSync(partial, file);
  return loaded;
}
