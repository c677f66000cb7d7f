import { inject } from 'vitest';
import { type BuiltinDatasetName, type Dataset, loadDataset } from '../src/index.js';
import type { PlainDataset } from './global-setup.js';
import { PYTHON } from './helpers.js';

const taken = new Map<BuiltinDatasetName, Dataset>();

/**
 * A built-in dataset as `loadDataset` gives it: the one the run's global setup loaded
 * (global-setup.ts), or, where that one is missing, loaded here.
 */
export async function builtinDataset(name: BuiltinDatasetName): Promise<Dataset> {
  const known = taken.get(name);
  if (known) return known;
  const shared: PlainDataset | undefined = inject('builtinDatasets')?.[name];
  const dataset = shared
    ? { ...shared, x: Float64Array.from(shared.x), y: Int32Array.from(shared.y) }
    : await loadDataset(name, PYTHON);
  taken.set(name, dataset);
  return dataset;
}
