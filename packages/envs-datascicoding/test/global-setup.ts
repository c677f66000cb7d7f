// A folder for the run's shared copies of the built-in datasets: the first test file that needs
// one loads it and leaves it there, and later files read it instead of starting two interpreters
// of their own (the Python check and the loader) for the same data. See `builtinDataset`
// (shared-datasets.ts). The folder lives as long as the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run keeps its loaded built-in datasets. */
    sharedDatasets: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'poad-dsc-test-datasets-'));
  project.provide('sharedDatasets', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
