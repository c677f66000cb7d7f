import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertSplittable,
  checkDatasetSpec,
  checkPython,
  DataSciOptionError,
  DatasetError,
  datasetName,
  loadDataset,
  PythonUnavailableError,
} from '../src/index.js';
import { PYTHON, pythonJson } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'poad-dsc-datasets-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TABLE = [
  'id,color,size,flag,label',
  '1,red,1.5,True,yes',
  '2,blue,,False,no',
  '3,green,2.5,True,yes',
  '4,red,3.0,False,no',
  '5,,1.0,True,yes',
  '6,blue,0.5,True,no',
  '7,green,4.0,False,yes',
].join('\n');

/** What scikit-learn itself loads and splits, for the built-in datasets' tests. */
interface Reference {
  iris: { first: number[]; y: number[]; splits: Array<{ train: number[]; test: number[] }> };
  /** train_test_split of 569 rows (breast_cancer's), seeds 0..4. */
  odd: Array<{ train: number[]; test: number[] }>;
}

/**
 * scikit-learn's answers for both tests, computed once in one interpreter, beside the first
 * dataset's load.
 */
let reference: Promise<Reference> | undefined;
const sklearnReference = (): Promise<Reference> =>
  (reference ??= pythonJson<Reference>(`
import json
import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split
def splits(n):
    out = []
    for seed in range(5):
        train, test = train_test_split(np.arange(n), test_size=0.5, shuffle=True, random_state=seed)
        out.append({'train': train.tolist(), 'test': test.tolist()})
    return out
x, y = load_iris(return_X_y=True)
print(json.dumps({'iris': {'first': x[0].tolist(), 'y': y.tolist(), 'splits': splits(len(y))}, 'odd': splits(569)}))
`));

describe('built-in datasets', () => {
  it('loads iris with the splits train_test_split gives for seeds 0..4', async () => {
    const [data, { iris: expected }] = await Promise.all([
      loadDataset('iris', PYTHON),
      sklearnReference(),
    ]);
    expect([data.n, data.d]).toEqual([150, 4]);
    expect(data.classes).toEqual(['setosa', 'versicolor', 'virginica']);
    expect(Array.from(data.x.subarray(0, 4))).toEqual(expected.first);
    expect(Array.from(data.y)).toEqual(expected.y);
    expect(data.splits).toEqual(expected.splits);
    expect(data.splits[0]?.test).toHaveLength(75);
  }, 30_000);

  it('splits an odd number of rows like train_test_split (test half rounded up)', async () => {
    const [data, { odd: expected }] = await Promise.all([
      loadDataset('breast_cancer', PYTHON),
      sklearnReference(),
    ]);
    expect([data.n, data.d]).toEqual([569, 30]);
    expect(data.splits).toEqual(expected);
    expect(data.splits[0]?.test).toHaveLength(285);
  }, 30_000);

  it('rejects unknown names with the list of choices', async () => {
    await expect(loadDataset('mnist' as 'iris', PYTHON)).rejects.toThrow(
      /iris, wine, breast_cancer, digits/,
    );
  });

  it('checkDatasetSpec checks a spec without loading it, naming the bad field', () => {
    expect(() => checkDatasetSpec('iris')).not.toThrow();
    expect(() => checkDatasetSpec({ csv: 'any.csv', target: 'y' })).not.toThrow();
    expect(() => checkDatasetSpec('mnist' as 'iris')).toThrow(DatasetError);
    expect(() => checkDatasetSpec({ csv: 'any.csv', target: 'y', maxRows: 0 })).toThrow(
      DataSciOptionError,
    );
    expect(() =>
      checkDatasetSpec({ csv: 'any.csv', target: 'y', holdout: { fraction: 2 } }),
    ).toThrow(/dataset\.holdout\.fraction/);
  });
});

describe('CSV datasets', () => {
  const csv = join(dir, 'toy table.csv');
  writeFileSync(csv, TABLE);

  it('drops columns and incomplete rows, keeps the first N, label-encodes text', async () => {
    const data = await loadDataset({ csv, target: 'label', drop: ['id'], maxRows: 4 }, PYTHON);
    expect(datasetName({ csv, target: 'label' })).toBe('toy-table');
    expect(data.name).toBe('toy-table');
    expect([data.n, data.d]).toEqual([4, 3]);
    // Complete rows are ids 1, 3, 4, 6 (first four). color: blue 0, green 1, red 2;
    // flag: False 0, True 1; label: no 0, yes 1.
    expect(Array.from(data.x)).toEqual([2, 1.5, 1, 1, 2.5, 1, 2, 3.0, 0, 0, 0.5, 1]);
    expect(Array.from(data.y)).toEqual([1, 1, 0, 0]);
    expect(data.classes).toEqual(['no', 'yes']);
  }, 30_000);

  it('names a missing column and lists the available ones', async () => {
    await expect(loadDataset({ csv, target: 'outcome' }, PYTHON)).rejects.toThrow(
      /no column\(s\) outcome; columns are: id, color, size, flag, label/,
    );
  }, 30_000);

  it('names a missing file and bad options', async () => {
    const missing = join(dir, 'missing.csv');
    await expect(loadDataset({ csv: missing, target: 'y' }, PYTHON)).rejects.toThrow(DatasetError);
    await expect(loadDataset({ csv, target: 'label', maxRows: 0 }, PYTHON)).rejects.toThrow(
      DataSciOptionError,
    );
  }, 30_000);
});

describe('OpenML datasets', () => {
  const cacheDir = join(dir, 'openml-cache');
  it('reads a cached dataset without the network', async () => {
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(cacheDir);
    writeFileSync(join(cacheDir, 'openml-4242.csv'), TABLE);
    writeFileSync(
      join(cacheDir, 'openml-4242.json'),
      JSON.stringify({ name: 'toy_set', target: 'label' }),
    );
    const data = await loadDataset({ openml: 4242, cacheDir, drop: ['id'] }, PYTHON);
    expect(datasetName({ openml: 4242 })).toBe('openml-4242');
    expect(data.title).toBe('toy set');
    expect([data.n, data.d]).toEqual([5, 3]);
    expect(Array.from(data.y)).toEqual([1, 1, 0, 0, 1]);
  }, 30_000);

  it('refuses to download unless allowed, naming the cache files', async () => {
    await expect(loadDataset({ openml: 4243, cacheDir }, PYTHON)).rejects.toThrow(
      /openml-4243\.csv and openml-4243\.json.*allowNetwork: true/,
    );
  }, 30_000);
});

describe('Python availability', () => {
  it('explains the install when the interpreter is missing', async () => {
    const missing = join(dir, 'no-such-python3');
    const error = await checkPython(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonUnavailableError);
    expect((error as Error).message).toContain('apt-get install python3-sklearn python3-pandas');
    expect((error as Error).message).toContain(missing);
    await expect(loadDataset('iris', missing)).rejects.toThrow(PythonUnavailableError);
  });

  it('explains the install when scikit-learn is missing', async () => {
    const fake = join(dir, 'python-without-sklearn');
    writeFileSync(
      fake,
      `#!/bin/sh\nexec ${PYTHON} -c "import sys; sys.modules['sklearn'] = None; exec(sys.argv[-1])" "$@"\n`,
      {
        mode: 0o755,
      },
    );
    const error = await checkPython(fake).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonUnavailableError);
    expect((error as Error).message).toContain('apt-get install python3-sklearn python3-pandas');
  });

  it('reports versions when everything is there', async () => {
    const info = await checkPython(PYTHON);
    expect(info.sklearn).toMatch(/^\d+\.\d+/);
  });
});

describe('assertSplittable', () => {
  const dataset = (y: number[], splits: { train: number[]; test: number[] }[]) => ({
    name: 'tiny',
    title: 'tiny',
    n: y.length,
    d: 1,
    classes: ['a', 'b'],
    x: new Float64Array(y.length),
    y: Int32Array.from(y),
    splits,
  });

  it('accepts splits with two classes in both halves and names the first half without', () => {
    expect(() =>
      assertSplittable(dataset([0, 1, 0, 1], [{ train: [0, 1], test: [2, 3] }])),
    ).not.toThrow();
    const bad = dataset(
      [0, 1, 0, 1],
      [
        { train: [0, 1], test: [2, 3] },
        { train: [0, 2], test: [1, 3] },
      ],
    );
    expect(() => assertSplittable(bad)).toThrow(DatasetError);
    expect(() => assertSplittable(bad)).toThrow(
      /too small to split: with 4 rows, the training half of random split 1 holds a single class/,
    );
    expect(() =>
      assertSplittable(dataset([0, 1, 1, 1], [{ train: [0, 1], test: [2, 3] }])),
    ).toThrow(/the test half of random split 0/);
  });
});
