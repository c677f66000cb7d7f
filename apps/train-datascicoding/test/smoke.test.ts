import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { spawnApp } from '@poad/dev-kit';
import { afterAll, describe, expect, it } from 'vitest';

const runs = mkdtempSync(join(tmpdir(), 'poad-ds-smoke-'));
afterAll(() => rmSync(runs, { recursive: true, force: true }));
const app = 'apps/train-datascicoding/src/main.ts';

describe('npm run train:datascicoding', () => {
  it('generates programs, scores them in the sandbox, keeps the best, and resumes', async () => {
    const args = [
      '--dataset',
      'iris',
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--run-name',
      'ds',
      '--envs',
      '2',
      '--num-steps',
      '2',
      '--max-new-tokens',
      '16',
      '--eval-episodes',
      '1',
      '--quiet',
    ];
    const a = await spawnApp(app, [...args, '--max-iterations', '1']).done;
    expect(a.code, a.out).toBe(0);
    const best = JSON.parse(readFileSync(join(runs, 'ds', 'best.json'), 'utf8'));
    expect(typeof best.body).toBe('string');
    expect(best.reward).toBeGreaterThanOrEqual(-1);
    const b = await spawnApp(app, [
      '--resume',
      join(runs, 'ds'),
      '--max-iterations',
      '2',
      '--quiet',
    ]).done;
    expect(b.code, b.out).toBe(0);
    expect(existsSync(join(runs, 'ds', 'checkpoints', 'iter-00000002'))).toBe(true);
  });

  it('--algo etpo trains on generated programs (open action space): soft-Q metrics, best program, checkpoint with the critic adapters', async () => {
    const r = await spawnApp(app, [
      '--dataset',
      'iris',
      '--algo',
      'etpo',
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--run-name',
      'ds-etpo',
      '--envs',
      '2',
      '--num-steps',
      '2',
      '--max-new-tokens',
      '16',
      '--eval-episodes',
      '0',
      '--max-iterations',
      '1',
      '--quiet',
    ]).done;
    expect(r.code, r.out).toBe(0);
    const dir = join(runs, 'ds-etpo');
    const row = JSON.parse(readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim());
    expect(row.labelMass).toBeNull();
    expect(Number.isFinite(row.valueLoss) && Number.isFinite(row.klToReference)).toBe(true);
    expect(typeof JSON.parse(readFileSync(join(dir, 'best.json'), 'utf8')).body).toBe('string');
    const model = join(dir, 'checkpoints', 'iter-00000001', 'model');
    for (const sub of ['critic', 'target'])
      expect(existsSync(join(model, sub, 'adapter_model.safetensors'))).toBe(true);
  });

  it('--dataset csv without --csv/--target is rejected with the fix', async () => {
    const r = await spawnApp(app, [
      '--dataset',
      'csv',
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--quiet',
    ]).done;
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/--csv FILE and --target COLUMN/);
  });
});
