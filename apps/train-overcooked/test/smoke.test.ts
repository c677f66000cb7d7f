import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { spawnApp } from '@poad/dev-kit';
import { afterAll, describe, expect, it } from 'vitest';

const runs = mkdtempSync(join(tmpdir(), 'poad-oc-smoke-'));
afterAll(() => rmSync(runs, { recursive: true, force: true }));

describe('npm run train:overcooked', () => {
  it('trains 2 iterations of TWOSOME on tomato-salad and resumes to 3', async () => {
    const app = 'apps/train-overcooked/src/main.ts';
    const args = [
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--run-name',
      'oc',
      '--algo',
      'twosome',
      '--envs',
      '2',
      '--num-steps',
      '4',
      '--epochs',
      '1',
      '--minibatches',
      '2',
      '--eval-episodes',
      '1',
      '--quiet',
    ];
    const a = await spawnApp(app, [...args, '--max-iterations', '2']).done;
    expect(a.code, a.out).toBe(0);
    const b = await spawnApp(app, [
      '--resume',
      join(runs, 'oc'),
      '--max-iterations',
      '3',
      '--quiet',
    ]).done;
    expect(b.code, b.out).toBe(0);
    const rows = readFileSync(join(runs, 'oc', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(rows).toHaveLength(3);
  });

  it("--algo etpo trains with the preset's label token space", async () => {
    const r = await spawnApp('apps/train-overcooked/src/main.ts', [
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--run-name',
      'oc-etpo',
      '--algo',
      'etpo',
      '--envs',
      '2',
      '--num-steps',
      '4',
      '--epochs',
      '1',
      '--minibatches',
      '2',
      '--eval-episodes',
      '0',
      '--max-iterations',
      '1',
      '--quiet',
    ]).done;
    expect(r.code, r.out).toBe(0);
    const config = JSON.parse(readFileSync(join(runs, 'oc-etpo', 'config.json'), 'utf8'));
    expect(config).toMatchObject({ algo: 'etpo', tokenSpace: 'labels', gamma: 0.99 });
    const row = JSON.parse(readFileSync(join(runs, 'oc-etpo', 'metrics.jsonl'), 'utf8').trim());
    expect(Number.isFinite(row.valueLoss) && row.klToReference >= 0).toBe(true);
  });
});
