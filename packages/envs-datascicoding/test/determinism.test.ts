// Deterministic scoring (`seeded-v1`): programs that draw randomness without choosing a seed
// score bit for bit the same every time, forked from a fork server or started as a new
// interpreter, in the namespace sandbox and in the basic fallback; the old rule (`os-seeded`)
// does not, which shows the programs depend on the randomness the rule fixes.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Dataset,
  type EvaluateOptions,
  type Evaluation,
  EvaluationPool,
  evaluateHeldOut,
  evaluateProgram,
  loadDataset,
  probeIsolation,
} from '../src/index.js';
import { body, namespaceSupport, PYTHON } from './helpers.js';
import { builtinDataset } from './shared-datasets.js';

const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-determinism-test-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const pool = new EvaluationPool(2);
const support = namespaceSupport(await probeIsolation(PYTHON));

/** A forest of three trees whose seed the program takes from `seedExpression`. */
const forest = (setup: string[], seedExpression: string) =>
  body(
    'from sklearn.ensemble import RandomForestClassifier',
    ...setup,
    `model = RandomForestClassifier(n_estimators=3, random_state=${seedExpression})`,
    'model.fit(x_train, y_train)',
  );

/** Programs whose score depends on randomness they do not seed themselves. */
const PROGRAMS: Record<string, string> = {
  'np.random without a seed': forest([], 'np.random.randint(1 << 30)'),
  'default_rng() without a seed': forest([], 'int(np.random.default_rng().integers(1 << 30))'),
  "Python's random": forest(['import random'], 'random.randrange(1 << 30)'),
  'iteration order of a set of strings': forest(
    ["names = {'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'}"],
    'sum(i * len(s) * 7919 for i, s in enumerate(names))',
  ),
  'a scikit-learn model with random_state=None': forest([], 'None'),
};

/**
 * The launches every program is scored with: forked from two fork servers (two temp directories,
 * two servers, each with its own start), two new interpreters, and twice in the basic mode.
 * Where user namespaces are missing, the namespace launches fall back to the basic mode. Made
 * once for the file: the two servers start once and fork every program of every test.
 */
const LAUNCHES: ReadonlyArray<readonly [string, EvaluateOptions]> = (() => {
  const dir = (name: string) => {
    const path = mkdtempSync(join(scratch, `${name}-`));
    chmodSync(path, 0o755);
    return path;
  };
  const ns = support === 'namespaces' ? ('namespaces' as const) : ('auto' as const);
  return [
    ['fork server A', { isolation: ns, forkServer: true, tmpDir: dir('a') }],
    ['fork server B', { isolation: ns, forkServer: true, tmpDir: dir('b') }],
    ['new interpreter 1', { isolation: ns, forkServer: false }],
    ['new interpreter 2', { isolation: ns, forkServer: false }],
    ['basic 1', { isolation: 'basic' }],
    ['basic 2', { isolation: 'basic' }],
  ];
})();

/** The bits of an evaluation that must repeat: outcome, every split's AUC, their mean. */
const outcome = (e: Evaluation) => ({
  ok: e.ok,
  reason: e.reason ?? null,
  error: e.error ?? null,
  aucs: e.aucs,
  auc: e.auc,
});

let dataset: Dataset;
beforeAll(async () => {
  dataset = await builtinDataset('breast_cancer');
}, 60_000);

describe('seeded-v1 scoring', () => {
  for (const [what, program] of Object.entries(PROGRAMS)) {
    it(`scores a program using ${what} bit for bit the same in every launch`, async () => {
      const runs = await Promise.all(
        LAUNCHES.map(async ([label, options]) => {
          const e = await evaluateProgram(dataset, program, { ...options, python: PYTHON, pool });
          return [label, e] as const;
        }),
      );
      const [, first] = runs[0]!;
      expect(first.error).toBeUndefined();
      expect(first.ok).toBe(true);
      expect(first.scoring).toBe('seeded-v1');
      for (const [label, e] of runs) {
        // toEqual compares numbers with Object.is: bit for bit.
        expect(outcome(e), label).toEqual(outcome(first));
      }
    }, 120_000);
  }

  it('holds for held-out scoring too', async () => {
    const csv = join(scratch, 'table.csv');
    const rows = Array.from({ length: 240 }, (_, i) => {
      const a = ((i * 37) % 101) / 10;
      const b = ((i * 53) % 89) / 10;
      return `${a},${b},${(i * 7) % 5},${a + ((i * 13) % 7) / 3 > 6 ? 'yes' : 'no'}`;
    });
    writeFileSync(csv, `a,b,c,label\n${rows.join('\n')}\n`);
    const data = await loadDataset({ csv, target: 'label', holdout: { fraction: 0.25 } }, PYTHON);
    const program = PROGRAMS['np.random without a seed']!;
    const scores = await Promise.all(
      LAUNCHES.map(([, options]) => evaluateHeldOut(data, program, { ...options, pool })),
    );
    expect(scores[0]!.ok).toBe(true);
    for (const e of scores) expect(outcome(e)).toEqual(outcome(scores[0]!));
  }, 120_000);
});

describe('os-seeded scoring (the rule of older runs)', () => {
  it('scores the same programs differently from one scoring to the next', async () => {
    // New interpreters each: random numpy and Python state and a random hash seed each time.
    // Each program is scored until two scorings differ, at most 4 times: it fails, as when it
    // was always scored 4 times, exactly when all 4 agree. The programs share the pool.
    const distinctScores = async (program: string) => {
      const aucs = new Set<number>();
      for (let i = 0; i < 4 && aucs.size < 2; i++) {
        const e = await evaluateProgram(dataset, program, {
          python: PYTHON,
          pool,
          scoring: 'os-seeded',
          forkServer: false,
        });
        expect(e.error).toBeUndefined();
        expect(e.scoring).toBe('os-seeded');
        aucs.add(e.auc);
      }
      return aucs.size;
    };
    const counts = await Promise.all(Object.values(PROGRAMS).map(distinctScores));
    Object.keys(PROGRAMS).forEach((what, i) => {
      expect(counts[i], what).toBeGreaterThan(1);
    });
  }, 240_000);
});
