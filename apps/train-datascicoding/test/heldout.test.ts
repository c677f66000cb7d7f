import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { spawnApp, trainingHarness } from '@poad/dev-kit';
import { createDataSciCodingEnv, evaluateHeldOut, loadDataset } from '@poad/envs-datascicoding';
import { describe, expect, it } from 'vitest';
import {
  bestOfKCurve,
  expectedBestOfK,
  type HeldOutScore,
  runDatasetMismatch,
  selectRunPrograms,
  summariseHeldOut,
} from '../src/heldout.js';
import { ferryCrossingsCsv, kilnBatchesCsv } from '../src/make-datasets.js';
import { datasetOf, NAMED_DATASETS } from '../src/spec.js';

const app = 'apps/train-datascicoding/src/heldout.ts';
const h = trainingHarness({ app: 'apps/train-datascicoding/src/main.ts' });
// Scores kept between commands go to the harness's folder, not to the home folder.
process.env.POAD_CACHE_DIR = h.runs;

/** E[max] of k draws without replacement by listing every k-subset (for small vectors). */
function bruteBestOfK(values: readonly number[], k: number): number {
  let total = 0;
  let count = 0;
  const pick = (start: number, chosen: number[]) => {
    if (chosen.length === k) {
      total += Math.max(...chosen.map((i) => values[i]!));
      count++;
      return;
    }
    for (let i = start; i < values.length; i++) pick(i + 1, [...chosen, i]);
  };
  pick(0, []);
  return total / count;
}

describe('expectedBestOfK', () => {
  it('is exact on a hand-computed vector', () => {
    const v = [0.9, 0.5, 0.7];
    expect(expectedBestOfK(v, 1)).toBeCloseTo((0.5 + 0.7 + 0.9) / 3, 14);
    // Pairs {0.5, 0.7}, {0.5, 0.9}, {0.7, 0.9}: maxima 0.7, 0.9, 0.9.
    expect(expectedBestOfK(v, 2)).toBeCloseTo((0.7 + 0.9 + 0.9) / 3, 14);
    expect(expectedBestOfK(v, 3)).toBeCloseTo(0.9, 14);
    expect(bestOfKCurve(v, 256)).toHaveLength(3);
  });

  it('agrees with listing every subset, ties and failures (0) included', () => {
    const v = [0.81, 0, 0.77, 0.81, 0, 0.6, 0.93, 0.5];
    for (let k = 1; k <= v.length; k++) {
      expect(expectedBestOfK(v, k)).toBeCloseTo(bruteBestOfK(v, k), 12);
    }
    const curve = bestOfKCurve(v, 5);
    expect(curve).toHaveLength(5);
    for (let k = 1; k < curve.length; k++) expect(curve[k]!).toBeGreaterThanOrEqual(curve[k - 1]!);
  });

  it('stays finite for a thousand values', () => {
    const v = Array.from({ length: 1000 }, (_, i) => (i % 37) / 37);
    expect(expectedBestOfK(v, 256)).toBeLessThanOrEqual(36 / 37);
    expect(expectedBestOfK(v, 256)).toBeGreaterThan(35 / 37);
    expect(expectedBestOfK(v, 1000)).toBeCloseTo(36 / 37, 12);
  });

  it('refuses k outside 1..n', () => {
    expect(() => expectedBestOfK([0.5], 2)).toThrow(RangeError);
    expect(() => expectedBestOfK([0.5], 0)).toThrow(RangeError);
  });
});

const row = (iteration: number, envStep: number, reward: number, body: string) => ({
  iteration,
  envStep,
  reward,
  ran: reward > -1,
  body,
});

describe('selectRunPrograms and summariseHeldOut', () => {
  const rows = [
    row(2, 3, 0.8, 'c'),
    row(1, 1, -1, 'a'),
    row(1, 2, 0.7, 'b'),
    row(3, 5, 0.9, 'e'),
    row(2, 4, 0.6, 'd'),
    row(3, 6, -1, 'a'),
  ];

  it('takes the last iterations, the last programs, or all', () => {
    const bodies = (s: { body: string }[]) => s.map((p) => p.body).join('');
    expect(bodies(selectRunPrograms(rows, { lastIterations: 2 }))).toBe('cdea');
    expect(bodies(selectRunPrograms(rows, { lastIterations: 0 }))).toBe('abcdea');
    expect(bodies(selectRunPrograms(rows, { last: 3, lastIterations: 2 }))).toBe('dea');
    expect(selectRunPrograms(rows, { last: 2, lastIterations: 0 })).toEqual([
      { body: 'e', rewardAuc: 0.9 },
      { body: 'a', rewardAuc: null },
    ]);
  });

  it('counts shares, means and best-of-k over the draws, repeats included', () => {
    const scores = new Map<string, HeldOutScore>([
      ['a', { ok: false, auc: null, reason: 'exception' }],
      ['b', { ok: true, auc: 0.5, reason: null }],
      ['c', { ok: true, auc: 0.7, reason: null }],
      ['d', { ok: false, auc: null, reason: 'timeout' }],
      ['e', { ok: true, auc: 0.9, reason: null }],
    ]);
    const programs = selectRunPrograms(rows, { lastIterations: 0 });
    const s = summariseHeldOut('run', 'dir', programs, scores, { failureValue: 0, kMax: 256 });
    expect(s.programs).toBe(6);
    expect(s.distinct).toBe(5);
    expect(s.ran).toBeCloseTo(3 / 6, 14);
    expect(s.meanAuc).toBeCloseTo(0.7, 14);
    expect(s.meanValue).toBeCloseTo(2.1 / 6, 14);
    expect(s.bestAuc).toBe(0.9);
    // Reward AUCs of the programs that ran on the held-out rows: b 0.7, c 0.8, e 0.9.
    expect(s.meanRewardAuc).toBeCloseTo(0.8, 14);
    expect(s.bestOfK).toHaveLength(6);
    expect(s.bestOfK[1]).toBeCloseTo(bruteBestOfK([0, 0.5, 0.7, 0, 0.9, 0], 2), 14);
    const worse = summariseHeldOut('run', 'dir', programs, scores, { failureValue: -1, kMax: 2 });
    expect(worse.bestOfK).toHaveLength(2);
    expect(worse.bestOfK[0]).toBeCloseTo((0.5 + 0.7 + 0.9 - 3) / 6, 14);
  });
});

describe('the named datasets', () => {
  it('are the generator’s output, byte for byte', () => {
    for (const [file, make] of [
      ['kiln_batches.csv', kilnBatchesCsv],
      ['ferry_crossings.csv', ferryCrossingsCsv],
    ] as const) {
      const text = readFileSync(new URL(`../data/${file}`, import.meta.url), 'utf8');
      expect(text).toBe(make());
    }
  });

  it('hold out a quarter of their rows, the rows scripts/headroom.py measures on', async () => {
    for (const [name, rows, n, d] of [
      ['kiln_batches', 1200, 900, 9],
      ['ferry_crossings', 1600, 1200, 10],
    ] as const) {
      const spec = NAMED_DATASETS[name]!;
      expect(datasetOf(name)).toBe(spec);
      const env = createDataSciCodingEnv(spec);
      const data = await env.dataset();
      expect([data.n, data.d, data.holdout!.n]).toEqual([n, d, rows - n]);
      const reset = await env.reset({ seed: 0 });
      // The prompt gives the reward rows' shape.
      expect(reset.observation).toContain(`The full dataset has shape (${n}, ${d})`);
      await env.close();
      const script = new URL('../scripts/headroom.py', import.meta.url).pathname;
      const held = JSON.parse(
        execFileSync(
          '/usr/bin/python3',
          [script, spec.csv, spec.target, '--holdout', '0.25', '--seed', '0', '--holdout-rows'],
          { encoding: 'utf8' },
        ),
      );
      expect(held).toEqual(data.holdout!.rows);
    }
  }, 120_000);

  it('--csv with --holdout gives that holdout; named datasets refuse another', async () => {
    expect(datasetOf('csv', { csv: 'a.csv', target: 't', holdout: 0.2 })).toEqual({
      csv: 'a.csv',
      target: 't',
      holdout: { fraction: 0.2, seed: 0 },
    });
    expect(
      runDatasetMismatch({ task: 'csv', csv: 'x/a.csv', target: 't' }, 'csv', {
        csv: 'a.csv',
        target: 't',
        holdout: { fraction: 0.2, seed: 0 },
      }),
    ).toMatch(/no --holdout/);
    expect(runDatasetMismatch({ task: 'iris' }, 'kiln_batches', datasetOf('kiln_batches'))).toMatch(
      /--dataset iris/,
    );
    const r = await h.run(['--dataset', 'kiln_batches', '--holdout', '0.3', '--quiet']);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(
      /--holdout and --holdout-seed go with --dataset csv \(kiln_batches holds out 0.25/,
    );
  }, 60_000);
});

const LOGISTIC = [
  'from sklearn.linear_model import LogisticRegression',
  '    model = LogisticRegression(max_iter=1000)',
  '    model.fit(x_train, y_train)',
].join('\n');

const gzipJson = (value: unknown): Buffer => gzipSync(JSON.stringify(value));

describe('npm run heldout', () => {
  it('scores a training run and a prior on the held-out rows', async () => {
    const train = await h.run([
      ...h.args('kiln', 1),
      '--dataset',
      'kiln_batches',
      '--envs',
      '2',
      '--num-steps',
      '2',
    ]);
    expect(train.code, train.out).toBe(0);
    const run = h.dir('kiln');
    const config = h.json('kiln', 'config.json');
    expect(config.task).toBe('kiln_batches');
    const rows = readFileSync(join(run, 'programs.jsonl'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(4);
    // Gzipped, as results/ keeps large prior files (the csv commands' test reads a plain one).
    const prior = join(h.runs, 'prior.json.gz');
    writeFileSync(
      prior,
      gzipJson({
        programs: {
          kiln_batches: [
            { body: LOGISTIC, ok: true, auc: 0.5 },
            { body: 'model = (', ok: false, auc: null },
            { body: LOGISTIC, ok: true, auc: 0.5 },
          ],
        },
      }),
    );
    const out = join(h.runs, 'report.json');
    const r = await spawnApp(app, [
      '--dataset',
      'kiln_batches',
      '--runs',
      run,
      '--prior',
      prior,
      '--last',
      '2',
      '--out',
      out,
    ]).done;
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('kiln_batches: 900 reward rows, 300 held out');
    expect(r.out).toMatch(/held out \[#+\] 100%/);
    expect(r.out).toMatch(/\| prior \| 2 \| 2 \| 50% \|/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.options).toEqual({ last: 2, lastIterations: null, kMax: 256, failureValue: 0 });
    const [ownRun, ownPrior] = report.summaries;
    expect(ownRun.source).toBe('kiln');
    expect(ownRun.programs).toBe(2);
    expect(ownPrior.programs).toBe(2);
    expect(ownPrior.ran).toBe(0.5);
    // The logistic regression's held-out AUC, as evaluateHeldOut gives it directly.
    const direct = await evaluateHeldOut(await loadDataset(NAMED_DATASETS.kiln_batches!), LOGISTIC);
    expect(ownPrior.meanAuc).toBeCloseTo(direct.auc, 12);
    expect(ownPrior.bestOfK).toHaveLength(2);
    expect(ownPrior.bestOfK[0]).toBeCloseTo(direct.auc / 2, 12);
    expect(ownPrior.bestOfK[1]).toBeCloseTo(direct.auc, 12);
    // Every distinct program once: the run's last two and the prior's two.
    const bodies = new Set([
      ...rows.slice(-2).map((l) => JSON.parse(l).body),
      LOGISTIC,
      'model = (',
    ]);
    expect(report.programs).toHaveLength(bodies.size);

    const wrong = await spawnApp(app, ['--dataset', 'ferry_crossings', '--runs', run]).done;
    expect(wrong.code).toBe(2);
    expect(wrong.out).toMatch(/it trained on --dataset kiln_batches, not ferry_crossings/);
    const none = await spawnApp(app, ['--dataset', 'iris', '--runs', run]).done;
    expect(none.code).toBe(2);
    expect(none.out).toMatch(/--dataset iris holds no rows out/);
  }, 600_000);
});
