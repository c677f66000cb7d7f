import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng } from '@poad/envs-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assembleProgram,
  DataSciOptionError,
  EvaluationPool,
  evaluateHeldOut,
  evaluateProgram,
  loadDataset,
} from '../src/index.js';
import { body, LOGISTIC, PYTHON, pythonJson } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'poad-dsc-holdout-test-'));
const runs = mkdtempSync(join(tmpdir(), 'poad-dsc-holdout-runs-'));
const pool = new EvaluationPool(2);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(runs, { recursive: true, force: true });
});

/** 400 rows, three classes of unequal size (the label depends on a product and a text column). */
function table(): string {
  const rng = createRng(5);
  const lines = ['u,v,w,shade,kind'];
  for (let i = 0; i < 400; i++) {
    const u = rng.float() * 2 - 1;
    const v = rng.float() * 2 - 1;
    const w = rng.float();
    const shade = rng.choice(['amber', 'teal', 'umber']);
    let kind = u * v > 0.1 ? 'p' : shade === 'teal' && w > 0.5 ? 'q' : 'r';
    if (rng.float() < 0.1) kind = rng.choice(['p', 'q', 'r']);
    lines.push([u.toFixed(3), v.toFixed(3), w.toFixed(3), shade, kind].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const csv = join(dir, 'toy_table.csv');
writeFileSync(csv, table());
const spec = { csv, target: 'kind', holdout: { fraction: 0.25, seed: 3 } };

const count = (ys: ArrayLike<number>, k: number) => Array.from(ys).filter((y) => y === k).length;

describe('holdout', () => {
  it('removes the held-out rows before the reward splits are made', async () => {
    // The two loads run side by side.
    const [full, data] = await Promise.all([
      loadDataset({ csv, target: 'kind' }, PYTHON),
      loadDataset(spec, PYTHON),
    ]);
    const held = data.holdout;
    if (!held) throw new Error('no holdout');
    expect(full.holdout).toBeUndefined();
    expect(held.n + data.n).toBe(full.n);
    expect(held.rows).toHaveLength(held.n);
    expect(data.splits).toHaveLength(5);
    // Every table row is either held out or a reward row, never both.
    const heldSet = new Set(held.rows);
    expect(heldSet.size).toBe(held.n);
    expect(held.rewardRows).toHaveLength(data.n);
    expect(held.rewardRows.filter((r) => heldSet.has(r))).toEqual([]);
    expect([...held.rows, ...held.rewardRows].sort((a, b) => a - b)).toEqual(
      Array.from({ length: full.n }, (_, i) => i),
    );
    // Every reward split indexes the reward rows only, and all of them.
    for (const split of data.splits) {
      const rows = [...split.train, ...split.test];
      expect([...rows].sort((a, b) => a - b)).toEqual(Array.from({ length: data.n }, (_, i) => i));
      const table = rows.map((i) => held.rewardRows[i] as number);
      expect(table.filter((r) => heldSet.has(r))).toEqual([]);
    }
    // The features and labels are the table's own rows.
    const d = full.d;
    const rowOf = (x: Float64Array, i: number) => Array.from(x.subarray(i * d, (i + 1) * d));
    held.rows.forEach((r, i) => {
      expect(rowOf(held.x, i)).toEqual(rowOf(full.x, r));
      expect(held.y[i]).toBe(full.y[r]);
    });
    held.rewardRows.forEach((r, i) => {
      expect(rowOf(data.x, i)).toEqual(rowOf(full.x, r));
      expect(data.y[i]).toBe(full.y[r]);
    });
    // The splits are train_test_split's (seeds 0..4) of the reward rows.
    const expected = await pythonJson<Array<{ train: number[]; test: number[] }>>(
      `
import json, sys
import numpy as np
from sklearn.model_selection import train_test_split
n = int(sys.argv[1])
out = []
for seed in range(5):
    train, test = train_test_split(np.arange(n), test_size=0.5, shuffle=True, random_state=seed)
    out.append({'train': train.tolist(), 'test': test.tolist()})
print(json.dumps(out))
`,
      [String(data.n)],
    );
    expect(data.splits).toEqual(expected);
  }, 60_000);

  it('is stratified: round(fraction × rows) of every class', async () => {
    const full = await loadDataset({ csv, target: 'kind' }, PYTHON);
    const data = await loadDataset(spec, PYTHON);
    const held = data.holdout!;
    expect(full.classes).toEqual(['p', 'q', 'r']);
    for (let k = 0; k < 3; k++) {
      const rows = count(full.y, k);
      expect(count(held.y, k)).toBe(Math.floor(0.25 * rows + 0.5));
      expect(count(data.y, k)).toBe(rows - count(held.y, k));
    }
    // The classes are of unequal size, so a draw that ignored them would not give this.
    expect(new Set([0, 1, 2].map((k) => count(full.y, k))).size).toBe(3);
  }, 60_000);

  it('is deterministic for a seed and changes with it', async () => {
    // Another name is another cache entry, so `again` loads the CSV again (beside `other`).
    const [a, again, other] = await Promise.all([
      loadDataset(spec, PYTHON),
      loadDataset({ ...spec, name: 'toy_again' }, PYTHON),
      loadDataset({ ...spec, holdout: { fraction: 0.25, seed: 4 } }, PYTHON),
    ]);
    expect(again.holdout!.rows).toEqual(a.holdout!.rows);
    expect(again.splits).toEqual(a.splits);
    expect(other.holdout!.rows).not.toEqual(a.holdout!.rows);
    expect(other.holdout!.n).toBe(a.holdout!.n);
  }, 60_000);

  it('refuses a bad fraction or seed, naming the field', async () => {
    for (const [holdout, field] of [
      [{ fraction: 0 }, 'dataset.holdout.fraction'],
      [{ fraction: 0.95 }, 'dataset.holdout.fraction'],
      [{ fraction: 0.2, seed: -1 }, 'dataset.holdout.seed'],
      [{ fraction: 0.2, seed: 1.5 }, 'dataset.holdout.seed'],
    ] as const) {
      const error = await loadDataset({ csv, target: 'kind', holdout }, PYTHON).catch((e) => e);
      expect(error).toBeInstanceOf(DataSciOptionError);
      expect((error as Error).message).toContain(field);
    }
  });
});

/**
 * scikit-learn's own computation: the CSV encoded as the environment does, each module of its
 * JSON list fit on the other rows, and its AUC on the held-out ones.
 */
const REFERENCE = `
import json, sys
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
path, target, sources, held = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
df = pd.read_csv(path)
features = df.drop(columns=[target])
for c in features.columns:
    if features[c].dtype == object:
        features[c] = pd.factorize(features[c], sort=True)[0]
x = features.to_numpy(dtype=np.float64)
y = pd.factorize(df[target], sort=True)[0]
rest = np.setdiff1d(np.arange(len(y)), held)
def score(source):
    namespace = {}
    exec(compile(source, 'solution.py', 'exec'), namespace)
    model = namespace['build_model'](x[rest], y[rest])
    proba = model.predict_proba(x[held])
    return roc_auc_score(y[held], proba, multi_class='ovo')
print(json.dumps([score(source) for source in sources]))
`;

const FOREST = body(
  'from sklearn.ensemble import RandomForestClassifier',
  'model = RandomForestClassifier(n_estimators=50, random_state=0)',
  'model.fit(x_train, y_train)',
);

describe('evaluateHeldOut', () => {
  it('matches scikit-learn on the held-out rows (logistic regression and a forest)', async () => {
    const data = await loadDataset(spec, PYTHON);
    const programs = [LOGISTIC, FOREST];
    // scikit-learn's scores of both programs, from one interpreter while the sandbox runs them.
    const references = pythonJson<number[]>(REFERENCE, [
      csv,
      'kind',
      JSON.stringify(programs.map((program) => assembleProgram(program, data.n, data.d))),
      JSON.stringify(data.holdout!.rows),
    ]);
    references.catch(() => {});
    const aucs: number[] = [];
    for (const [i, program] of programs.entries()) {
      const evaluation = await evaluateHeldOut(data, program, {
        python: PYTHON,
        pool,
        tmpDir: runs,
      });
      expect(evaluation.error).toBeUndefined();
      expect(evaluation.ok).toBe(true);
      expect(evaluation.aucs).toEqual([evaluation.auc]);
      expect(evaluation.std).toBe(0);
      const expected = (await references)[i]!;
      expect(Math.abs(evaluation.auc - expected)).toBeLessThan(1e-6);
      aucs.push(evaluation.auc);
    }
    // Two different models, two different scores: the forest sees the product the line cannot.
    expect(aucs[1]! - aucs[0]!).toBeGreaterThan(0.05);
    expect(readdirSync(runs)).toEqual([]);
  }, 120_000);

  it('gives the sandbox the reward rows and the held-out features, never their labels', async () => {
    const data = await loadDataset(spec, PYTHON);
    const held = data.holdout!.n;
    const peek = body(
      "labels = np.fromfile('y.bin', dtype='<i8')",
      `assert len(labels) == ${data.n + held} and len(x_train) == ${data.n}`,
      `assert (labels[-${held}:] == -1).all(), 'held-out labels reached the sandbox'`,
      LOGISTIC,
    );
    const evaluation = await evaluateHeldOut(data, peek, { python: PYTHON, pool, tmpDir: runs });
    expect(evaluation.error).toBeUndefined();
    expect(evaluation.ok).toBe(true);
  }, 60_000);

  it('fails a program as the reward does and refuses a dataset without held-out rows', async () => {
    const data = await loadDataset(spec, PYTHON);
    const banned = await evaluateHeldOut(data, 'model = SVC(probability=True)', { pool });
    expect(banned.reason).toBe('banned');
    const broken = await evaluateHeldOut(data, 'model = (', { python: PYTHON, pool, tmpDir: runs });
    expect(broken.ok).toBe(false);
    expect(broken.reason).toBe('syntax');
    // The reward itself scores on the reward rows' five splits.
    const reward = await evaluateProgram(data, LOGISTIC, { python: PYTHON, pool, tmpDir: runs });
    expect(reward.aucs).toHaveLength(5);
    const full = await loadDataset({ csv, target: 'kind' }, PYTHON);
    await expect(evaluateHeldOut(full, LOGISTIC, { pool })).rejects.toThrow(DataSciOptionError);
  }, 60_000);
});
