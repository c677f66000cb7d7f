// Loads the built-in datasets that the test files score programs on once for the whole run, in
// vitest's main process: each file would otherwise start two interpreters of its own (the Python
// check and the loader) for the same data. The files take them with `builtinDataset`
// (shared-datasets.ts); datasets.test.ts and env.test.ts still load their own, as that is part of
// what they test.
import type { TestProject } from 'vitest/node';
import { type BuiltinDatasetName, type Dataset, loadDataset } from '../src/index.js';
import { PYTHON } from './helpers.js';

/** The built-in datasets the files share. */
export const SHARED_DATASETS = [
  'iris',
  'wine',
  'breast_cancer',
] as const satisfies readonly BuiltinDatasetName[];

/** A dataset with plain arrays in place of its typed ones, as it passes to the test files. */
export interface PlainDataset extends Omit<Dataset, 'x' | 'y' | 'holdout'> {
  x: number[];
  y: number[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The loaded {@link SHARED_DATASETS}; one that failed to load is missing. */
    builtinDatasets: Partial<Record<BuiltinDatasetName, PlainDataset>>;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const loaded = await Promise.allSettled(SHARED_DATASETS.map((name) => loadDataset(name, PYTHON)));
  const plain: Partial<Record<BuiltinDatasetName, PlainDataset>> = {};
  loaded.forEach((result, i) => {
    // A dataset that does not load here (no Python, say) is loaded by the file that needs it,
    // which then fails with the loader's own error.
    if (result.status !== 'fulfilled') return;
    const { x, y, holdout: _none, ...rest } = result.value;
    plain[SHARED_DATASETS[i]!] = { ...rest, x: Array.from(x), y: Array.from(y) };
  });
  project.provide('builtinDatasets', plain);
}
