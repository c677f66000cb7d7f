import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assembleProgram,
  type BuiltinDatasetName,
  type Dataset,
  EvaluationPool,
  evaluateProgram,
} from '../src/index.js';
import { body, LOGISTIC, PYTHON, pythonJson } from './helpers.js';
import { builtinDataset } from './shared-datasets.js';

const runs = mkdtempSync(join(tmpdir(), 'poad-dsc-scoring-test-'));
const pool = new EvaluationPool(2);
afterAll(() => rmSync(runs, { recursive: true, force: true }));

/**
 * scikit-learn's own computation, written like the original environment's scorer: for each
 * (dataset, module) pair of its JSON argument, the AUCs of the five splits, their mean and std.
 */
const REFERENCE = `
import json, sys
import numpy as np
from sklearn import datasets
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
def score(name, source):
    x, y = getattr(datasets, 'load_' + name)(return_X_y=True)
    namespace = {}
    exec(compile(source, 'solution.py', 'exec'), namespace)
    aucs = []
    for seed in range(5):
        x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.5, shuffle=True, random_state=seed)
        proba = namespace['build_model'](x_train, y_train).predict_proba(x_test)
        if proba.shape[1] > 2:
            aucs.append(roc_auc_score(y_test, proba, multi_class='ovo'))
        else:
            aucs.append(roc_auc_score(y_test, proba[:, 1]))
    return {'aucs': aucs, 'mean': float(np.mean(aucs)), 'std': float(np.std(aucs))}
print(json.dumps([score(name, source) for name, source in json.loads(sys.argv[1])]))
`;

interface Reference {
  aucs: number[];
  mean: number;
  std: number;
}

const cases: Array<{ dataset: BuiltinDatasetName; code: string; what: string }> = [
  { dataset: 'iris', code: LOGISTIC, what: 'three classes, one-vs-one' },
  {
    dataset: 'breast_cancer',
    code: body(
      'from sklearn.tree import DecisionTreeClassifier',
      'model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(x_train, y_train)',
    ),
    what: 'binary with many tied probabilities',
  },
  {
    dataset: 'wine',
    code: body(
      'from sklearn.naive_bayes import GaussianNB',
      'model = GaussianNB()',
      'model.fit(x_train, y_train)',
    ),
    what: 'three classes, naive Bayes',
  },
];

// The datasets load at once; the reference scores of every case come from one interpreter,
// computed while the cases' programs run in the sandbox.
const data = new Map<BuiltinDatasetName, Dataset>();
let references: Promise<Reference[]>;
beforeAll(async () => {
  const loaded = await Promise.all(cases.map(({ dataset }) => builtinDataset(dataset)));
  for (const [i, { dataset }] of cases.entries()) data.set(dataset, loaded[i]!);
  const sources = cases.map(({ dataset, code }, i) => [
    dataset,
    assembleProgram(code, loaded[i]!.n, loaded[i]!.d),
  ]);
  references = pythonJson<Reference[]>(REFERENCE, [JSON.stringify(sources)]);
  // Awaited by the tests; a failure is reported there.
  references.catch(() => {});
}, 60_000);

describe('scoring agrees with scikit-learn', () => {
  cases.forEach(({ dataset, code, what }, i) => {
    it(`${dataset}: ${what}`, async () => {
      const evaluation = await evaluateProgram(data.get(dataset)!, code, {
        python: PYTHON,
        pool,
        tmpDir: runs,
      });
      const expected = (await references)[i]!;
      expect(evaluation.error).toBeUndefined();
      expect(evaluation.ok).toBe(true);
      expect(evaluation.aucs).toHaveLength(5);
      evaluation.aucs.forEach((auc, k) => {
        expect(auc).toBeCloseTo(expected.aucs[k] as number, 12);
      });
      expect(evaluation.auc).toBeCloseTo(expected.mean, 12);
      expect(evaluation.std).toBeCloseTo(expected.std, 12);
      expect(readdirSync(runs)).toEqual([]);
    }, 60_000);
  });
});

describe('failures', () => {
  it('names an unusable temporary directory', async () => {
    const data = await builtinDataset('iris');
    const missing = join(runs, 'does-not-exist');
    await expect(
      evaluateProgram(data, LOGISTIC, { python: PYTHON, pool, tmpDir: missing }),
    ).rejects.toThrow(/option tmpDir: cannot prepare a sandbox directory/);
  });

  it('refuses banned constructs without running anything', async () => {
    const data = await builtinDataset('iris');
    const code = body(
      'from sklearn.svm import SVC',
      'model = SVC(probability=True).fit(x_train, y_train)',
    );
    const evaluation = await evaluateProgram(data, code, { python: PYTHON, pool, tmpDir: runs });
    expect(evaluation).toMatchObject({ ok: false, reason: 'banned' });
    expect(evaluation.error).toContain('SVC(');
    expect(evaluation.durationMs).toBe(0);
    const allowed = await evaluateProgram(data, LOGISTIC, {
      python: PYTHON,
      pool,
      tmpDir: runs,
      banned: ['Logistic'],
    });
    expect(allowed.reason).toBe('banned');
  });

  it('names syntax errors, models without predict_proba and exceptions', async () => {
    const data = await builtinDataset('iris');
    // One at a time, forked from the server the cases above started (two at once would start
    // a second server for a few short runs).
    const options = { python: PYTHON, pool: new EvaluationPool(1), tmpDir: runs };
    const nanModel = body(
      'class Model:',
      '    def predict_proba(self, x):',
      "        return np.full((len(x), 3), float('nan'))",
      'model = Model()',
    );
    const [syntax, noProba, raised, exited, nan, forged] = await Promise.all([
      evaluateProgram(data, 'model = (', options),
      evaluateProgram(
        data,
        body(
          'from sklearn.linear_model import RidgeClassifier',
          'model = RidgeClassifier().fit(x_train, y_train)',
        ),
        options,
      ),
      evaluateProgram(data, body('import nonexistent_module_xyz', 'model = None'), options),
      evaluateProgram(data, body('import sys', 'sys.exit(3)'), options),
      evaluateProgram(data, nanModel, options),
      evaluateProgram(data, body('import os', "os.write(3, b'{not json')", 'os._exit(0)'), options),
    ]);
    expect(nan).toMatchObject({ ok: false, reason: 'bad-probabilities' });
    expect(nan.error).toContain('NaN');
    expect(forged).toMatchObject({ ok: false, reason: 'bad-probabilities' });
    expect(exited).toMatchObject({ ok: false, reason: 'exit' });
    expect(syntax).toMatchObject({ ok: false, reason: 'syntax' });
    expect(syntax.error).toMatch(/SyntaxError/);
    expect(noProba).toMatchObject({ ok: false, reason: 'no-model' });
    expect(noProba.error).toContain('RidgeClassifier');
    expect(raised).toMatchObject({ ok: false, reason: 'exception' });
    expect(raised.error).toContain("No module named 'nonexistent_module_xyz'");
  }, 60_000);
});
