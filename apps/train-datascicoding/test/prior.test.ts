import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnApp } from '@poad/dev-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { type PriorProgram, priorTable, summarise } from '../src/prior.js';
import { chosenEstimator } from '../src/programs.js';

const dir = mkdtempSync(join(tmpdir(), 'poad-prior-'));
// Scores kept between commands go here, not to the home folder.
process.env.POAD_CACHE_DIR = join(dir, 'cache');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const app = 'apps/train-datascicoding/src/prior.ts';

const program = (body: string, auc: number | null, reason: string | null = null): PriorProgram => ({
  body,
  tokens: 10,
  ok: auc !== null,
  auc,
  reason,
});

describe('chosenEstimator', () => {
  it('names the outer ensemble, else the last classifier a program builds', () => {
    expect(chosenEstimator('return make_pipeline(StandardScaler(), LogisticRegression(C=2))')).toBe(
      'LogisticRegression',
    );
    expect(
      chosenEstimator(
        "return VotingClassifier([('a', RandomForestClassifier()), ('b', GaussianNB())], voting='soft')",
      ),
    ).toBe('VotingClassifier');
    expect(chosenEstimator('return 42')).toBe('none');
  });
});

describe('summarise', () => {
  it('counts a failure as reward −1 and reports AUCs of the programs that ran', () => {
    const s = summarise('toy', [
      program('a', 0.9),
      program('a', 0.7),
      program('b', null, 'exception'),
      program('c', null, 'timeout'),
    ]);
    expect(s.samples).toBe(4);
    expect(s.ran).toBe(0.5);
    // (0.9 + 0.7 − 1 − 1) / 4
    expect(s.meanReward).toBeCloseTo(-0.1, 12);
    expect(s.meanAuc).toBeCloseTo(0.8, 12);
    expect(s.bestAuc).toBe(0.9);
    expect(s.distinct).toBe(3);
    expect(s.reasons).toEqual({ exception: 1, timeout: 1 });
    expect(priorTable([s])).toContain('| toy | 4 | 50% | -0.100 | 0.800 | 0.900 | 3 |');
  });

  it('has no AUC when nothing ran', () => {
    const s = summarise('none', [program('x', null, 'syntax')]);
    expect([s.ran, s.meanReward, s.meanAuc, s.bestAuc]).toEqual([0, -1, null, null]);
  });
});

describe('npm run prior', () => {
  it('samples and scores programs, and the same seed gives the same programs', async () => {
    const run = async (name: string) => {
      const out = join(dir, name);
      const r = await spawnApp(app, [
        '--datasets',
        'iris',
        '--samples',
        '3',
        '--seed',
        '7',
        '--out',
        out,
      ]).done;
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain('| iris | 3 |');
      return JSON.parse(readFileSync(out, 'utf8'));
    };
    const a = await run('a.json');
    const b = await run('b.json');
    expect(a.programs.iris).toHaveLength(3);
    expect(a.programs.iris.every((p: PriorProgram) => /sklearn/.test(p.body))).toBe(true);
    expect(b.programs.iris.map((p: PriorProgram) => p.body)).toEqual(
      a.programs.iris.map((p: PriorProgram) => p.body),
    );
    expect(a.summaries[0].dataset).toBe('iris');
  });

  it('refuses an unknown dataset, naming the choices', async () => {
    const r = await spawnApp(app, ['--datasets', 'titanic', '--samples', '1']).done;
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/--datasets: unknown dataset titanic; choose from .*iris/);
  });
});
