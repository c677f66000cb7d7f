// npm run prior and npm run heldout on a user's own CSV, taken as the training command takes it
// (--csv FILE --target COLUMN --holdout F [--holdout-seed S]): the same preprocessing and
// held-out rows, checked against a run's config.json and a prior file's record; the scoring
// rule each source's rewards were scored by.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { spawnApp } from '@poad/dev-kit';
import { datasetDigest, evaluateProgram, loadDataset } from '@poad/envs-datascicoding';
import { afterAll, describe, expect, it } from 'vitest';
import { type PriorProgram, priorPlan } from '../src/prior.js';

const dir = mkdtempSync(join(tmpdir(), 'poad-csv-commands-'));
// The commands keep scores in $POAD_CACHE_DIR/datascicoding-scores unless told otherwise.
process.env.POAD_CACHE_DIR = join(dir, 'cache');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const prior = 'apps/train-datascicoding/src/prior.ts';
const heldout = 'apps/train-datascicoding/src/heldout.ts';

/** A small table with a text column and a label that depends on three columns (no randomness). */
function greenhouseCsv(): string {
  const rows = Array.from({ length: 240 }, (_, i) => {
    const temp = 14 + ((i * 37) % 130) / 10;
    const light = ((i * 53) % 97) / 10;
    const kind = ['fern', 'palm', 'cactus'][i % 3]!;
    const score = temp / 4 + light / 2 + (kind === 'cactus' ? 2 : 0) + ((i * 13) % 7) / 4;
    return `${temp.toFixed(1)},${light.toFixed(1)},${kind},${score > 9 ? 'thriving' : 'wilting'}`;
  });
  return `temperature,light,kind,state\n${rows.join('\n')}\n`;
}

const csv = join(dir, 'greenhouse.csv');
writeFileSync(csv, greenhouseCsv());
const spec = { csv, target: 'state', holdout: { fraction: 0.25, seed: 0 } };
const CSV_ARGS = ['--csv', csv, '--target', 'state', '--holdout', '0.25'];

const LOGISTIC = [
  'from sklearn.linear_model import LogisticRegression',
  '    model = LogisticRegression(max_iter=1000)',
  '    model.fit(x_train, y_train)',
].join('\n');

/** A run directory as a training run leaves it: config.json and programs.jsonl. */
function fakeRun(name: string, config: Record<string, unknown>): string {
  const run = join(dir, name);
  mkdirSync(run);
  writeFileSync(
    join(run, 'config.json'),
    JSON.stringify({ task: 'csv', csv, target: 'state', ...config }),
  );
  writeFileSync(
    join(run, 'programs.jsonl'),
    `${JSON.stringify({ iteration: 1, envStep: 1, reward: 0.8, ran: true, body: LOGISTIC })}\n`,
  );
  return run;
}

describe('priorPlan', () => {
  const base = { datasets: ['iris', 'csv'], scoring: 'seeded-v1', timeLimit: 'wall' } as const;

  it("keeps 'csv' for the bundled table, and adds --csv as the user's table named by its file", () => {
    const names = (o: Record<string, unknown>, explicit: Record<string, unknown> = {}) =>
      priorPlan({ ...base, ...o }, explicit).datasets.map((d) => d.name);
    expect(names({})).toEqual(['iris', 'plant_health.csv']);
    // --csv alone samples the user's table only; with --datasets given, both.
    expect(names({ csv, target: 'state' })).toEqual(['greenhouse.csv']);
    expect(names({ csv, target: 'state' }, { datasets: ['iris', 'csv'] })).toEqual([
      'iris',
      'plant_health.csv',
      'greenhouse.csv',
    ]);
    const own = priorPlan({ ...base, csv, target: 'state', holdout: 0.25 }, {}).datasets[0]!;
    expect(own).toEqual({ name: 'greenhouse.csv', task: 'csv', spec });
  });

  it('refuses CSV options without --csv, a --csv without --target, and a clash of names', () => {
    expect(() => priorPlan({ ...base, target: 'state' }, { target: 'state' })).toThrow(
      /--target, --holdout, --holdout-seed and --max-rows go with --csv FILE/,
    );
    expect(() => priorPlan({ ...base, csv }, {})).toThrow(/--csv FILE and --target COLUMN/);
    expect(() =>
      priorPlan({ ...base, csv, target: 'state', holdoutSeed: 2 }, { holdoutSeed: 2 }),
    ).toThrow(/--holdout-seed goes with --holdout/);
    const clash = join(dir, 'plant_health.csv');
    writeFileSync(clash, greenhouseCsv());
    expect(() =>
      priorPlan({ ...base, csv: clash, target: 'state' }, { datasets: ['csv'] }),
    ).toThrow(OptionError);
  });

  it("with --run takes the run's dataset and scoring, and refuses options that differ", () => {
    const run = fakeRun('plan-run', {
      holdout: 0.25,
      holdoutSeed: 1,
      scoring: 'seeded-v1',
      timeLimit: 'cpu',
      timeout: 20,
    });
    const plan = priorPlan({ ...base, run }, {});
    expect(plan.datasets).toEqual([
      {
        name: 'greenhouse.csv',
        task: 'csv',
        spec: { ...spec, holdout: { fraction: 0.25, seed: 1 } },
      },
    ]);
    expect(plan.scoring).toEqual({ scoring: 'seeded-v1', timeLimit: 'cpu', timeout: 20 });
    expect(() =>
      priorPlan({ ...base, run, csv, target: 'state', holdout: 0.25 }, { csv, holdout: 0.25 }),
    ).toThrow(/it trained with --holdout 0.25 --holdout-seed 1/);
    expect(() => priorPlan({ ...base, run, timeLimit: 'wall' }, { timeLimit: 'wall' })).toThrow(
      /--time-limit wall: --run .* scored its programs with --time-limit cpu/,
    );
    // A run recorded before the scoring field: its rewards were scored os-seeded.
    const old = fakeRun('plan-old', { holdout: 0.25 });
    expect(priorPlan({ ...base, run: old }, {}).scoring.scoring).toBe('os-seeded');
    expect(() => priorPlan({ ...base, run: old }, { scoring: 'seeded-v1' })).toThrow(
      /--scoring seeded-v1: --run .* scored its programs with --scoring os-seeded/,
    );
  });
});

describe('npm run prior and npm run heldout with --csv', () => {
  it('sample, score and check the user table as the training command has it', async () => {
    const priorFile = join(dir, 'prior.json');
    const p = await spawnApp(prior, [
      ...CSV_ARGS,
      '--samples',
      '3',
      '--seed',
      '3',
      '--out',
      priorFile,
    ]).done;
    expect(p.code, p.out).toBe(0);
    expect(p.out).toContain('| greenhouse.csv | 3 |');
    const file = JSON.parse(readFileSync(priorFile, 'utf8'));
    const data = await loadDataset(spec);
    expect(data.n).toBe(180);
    expect(file.scoring).toBe('seeded-v1');
    expect(file.timeLimit).toBe('wall');
    expect(file.datasets['greenhouse.csv']).toEqual({
      task: 'csv',
      csv,
      target: 'state',
      holdout: { fraction: 0.25, seed: 0 },
      maxRows: null,
      rewardRows: 180,
      columns: 3,
      heldOutRows: 60,
      dataDigest: datasetDigest(data),
    });
    // The prompt was the reward rows' (what a training run on the table sees), and every score
    // is the one the environment gives the same program on the same data, bit for bit.
    const programs = file.programs['greenhouse.csv'] as PriorProgram[];
    expect(programs).toHaveLength(3);
    for (const program of programs) {
      const e = await evaluateProgram(data, program.body);
      expect({ ok: program.ok, auc: program.auc }).toEqual({ ok: e.ok, auc: e.ok ? e.auc : null });
    }
    // The scores were kept on disk (every outcome but a timeout is).
    const cached = readdirSync(join(dir, 'cache', 'datascicoding-scores'), { recursive: true });
    expect(cached.filter((f) => String(f).endsWith('.json')).length).toBeGreaterThan(0);

    const newRun = fakeRun('new-run', { holdout: 0.25, scoring: 'seeded-v1' });
    const oldRun = fakeRun('old-run', { holdout: 0.25 });
    const report = join(dir, 'report.json');
    const h = await spawnApp(heldout, [
      '--dataset',
      'csv',
      ...CSV_ARGS,
      '--runs',
      `${newRun},${oldRun}`,
      '--prior',
      priorFile,
      '--out',
      report,
    ]).done;
    expect(h.code, h.out).toBe(0);
    expect(h.out).toContain('greenhouse: 180 reward rows, 60 held out (fraction 0.25, seed 0)');
    expect(h.out).toContain('old-run: its rewards were scored os-seeded');
    const r = JSON.parse(readFileSync(report, 'utf8'));
    expect(r.scoring).toBe('seeded-v1');
    expect(r.summaries.map((s: { rewardScoring: string }) => s.rewardScoring)).toEqual([
      'seeded-v1',
      'os-seeded',
      'seeded-v1',
    ]);
    expect(r.summaries[0].ran).toBe(1);

    // Other held-out rows than the prior's programs or a run's rewards had: refused, naming them.
    const otherSeed = ['--dataset', 'csv', ...CSV_ARGS, '--holdout-seed', '1'];
    const a = await spawnApp(heldout, [...otherSeed, '--prior', priorFile]).done;
    expect(a.code).toBe(2);
    expect(a.out).toMatch(
      /--prior .*prior.json: its programs of greenhouse.csv: they were sampled with --holdout 0.25 --holdout-seed 0/,
    );
    const b = await spawnApp(heldout, [...otherSeed, '--runs', newRun]).done;
    expect(b.code).toBe(2);
    expect(b.out).toMatch(/--runs .*new-run: it trained with --holdout 0.25 --holdout-seed 0/);
    // The same file under another name with other values: the data's digest tells them apart.
    const edited = join(dir, 'edited', 'greenhouse.csv');
    mkdirSync(join(dir, 'edited'));
    writeFileSync(edited, greenhouseCsv().replace('\n14.0,', '\n99.0,'));
    const c = await spawnApp(heldout, [
      '--dataset',
      'csv',
      '--csv',
      edited,
      '--target',
      'state',
      '--holdout',
      '0.25',
      '--prior',
      priorFile,
    ]).done;
    expect(c.code).toBe(2);
    expect(c.out).toMatch(/they were sampled on other data/);
  }, 300_000);
});
