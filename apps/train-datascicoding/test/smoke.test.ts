import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { trainingHarness } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';

const h = trainingHarness({ app: 'apps/train-datascicoding/src/main.ts' });
const runs = h.runs;

describe('npm run train:datascicoding', () => {
  it('generates programs with the code model, scores them in the sandbox, records them, and resumes', async () => {
    const args = [
      '--dataset',
      'iris',
      '--runs',
      runs,
      '--run-name',
      'ds',
      '--envs',
      '2',
      '--num-steps',
      '2',
      '--eval-episodes',
      '1',
      '--quiet',
    ];
    const a = await h.run([...args, '--max-iterations', '1']);
    expect(a.code, a.out).toBe(0);
    const dir = join(runs, 'ds');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).model).toBe('default-code');
    const programs = readFileSync(join(dir, 'programs.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(programs.map((p) => p.envStep)).toEqual([1, 2, 3, 4]);
    // Attempts as the t·N + n layout gives them (2 envs: steps 1, 2 are each env's first).
    expect(programs[0].attempt).toBe(1);
    expect(programs[1].attempt).toBe(1);
    expect(programs[2].attempt).toBe(programs[0].ran ? 1 : 2);
    // The code model writes scikit-learn code; its programs mostly run (reward = ROC AUC).
    expect(programs.every((p) => /sklearn/.test(p.body))).toBe(true);
    expect(programs.some((p) => p.ran && p.reward > 0.5)).toBe(true);
    // A program that failed says why (the env's reason), one that ran has none.
    for (const p of programs) expect(typeof p.reason === 'string').toBe(!p.ran);
    const best = JSON.parse(readFileSync(join(dir, 'best.json'), 'utf8'));
    expect(best.reward).toBe(Math.max(...programs.map((p) => p.reward)));
    expect(readFileSync(join(dir, 'code-evolution.html'), 'utf8')).toContain('<section>');
    expect(readFileSync(join(dir, 'code-curves.svg'), 'utf8')).toContain('<svg');
    const row = JSON.parse(readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim());
    expect(row.programsRun).toBe(programs.filter((p) => p.ran).length / 4);
    expect(row.bestReward).toBe(best.reward);
    // Programs stopped at the wall-clock limit, the one outcome a repeat of the run can change.
    expect(row.timeouts).toBe(programs.filter((p) => p.reason === 'timeout').length);
    const b = await h.run(['--resume', join(runs, 'ds'), '--max-iterations', '2', '--quiet']);
    expect(b.code, b.out).toBe(0);
    expect(existsSync(join(runs, 'ds', 'checkpoints', 'iter-00000002'))).toBe(true);
    const after = readFileSync(join(dir, 'programs.jsonl'), 'utf8').trim().split('\n');
    expect(after.map((l) => JSON.parse(l).envStep)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('--algo etpo trains on generated programs (open action space): soft-Q metrics, best program, checkpoint with the critic adapters', async () => {
    const r = await h.run([
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
    ]);
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

  it('--algo grpo plays groups of whole episodes of generated programs: env steps and attempts follow its layout', async () => {
    const r = await h.run([
      '--dataset',
      'iris',
      '--algo',
      'grpo',
      '--groups',
      '1',
      '--group-size',
      '2',
      '--runs',
      runs,
      '--run-name',
      'ds-grpo',
      '--max-new-tokens',
      '48',
      '--eval-episodes',
      '0',
      '--max-iterations',
      '2',
      '--quiet',
    ]);
    expect(r.code, r.out).toBe(0);
    const dir = join(runs, 'ds-grpo');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toMatchObject({
      algo: 'grpo',
      envs: 2,
      numSteps: 5,
    });
    const programs = readFileSync(join(dir, 'programs.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // One program per env step, numbered 1.. up to the run's env steps, iteration by iteration.
    expect(programs.map((p) => p.envStep)).toEqual(
      Array.from({ length: rows[1].envSteps }, (_, i) => i + 1),
    );
    expect(programs.filter((p) => p.iteration === 1)).toHaveLength(rows[0].envSteps);
    // Episodes come one after another: each starts at attempt 1 and counts up after a failure
    // until a program runs or the fifth fails.
    let expected = 1;
    for (const p of programs) {
      expect(p.attempt).toBe(expected);
      expected = p.ran || p.attempt === 5 ? 1 : p.attempt + 1;
    }
    expect(expected).toBe(1);
  });

  const refused = async (csv: string, target = 'label') => {
    const file = join(runs, `bad-${Math.random().toString(36).slice(2)}.csv`);
    writeFileSync(file, csv);
    const r = await h.run([
      '--dataset',
      'csv',
      '--csv',
      file,
      '--target',
      target,
      '--runs',
      runs,
      '--quiet',
    ]);
    expect(r.code, r.out).toBe(2);
    // Refused before the model loads (the backend line comes after loading it).
    expect(r.out).not.toMatch(/backend:/);
    return r.out;
  };
  const rows = (n: number, label: (i: number) => string) =>
    `a,b,label\n${Array.from({ length: n }, (_, i) => `${i},${(i * 7) % 5},${label(i)}`).join('\n')}\n`;

  it('refuses a CSV without the target column, naming the columns', async () => {
    expect(
      await refused(
        rows(40, (i) => String(i % 2)),
        'outcome',
      ),
    ).toMatch(/has no column\(s\) outcome; columns are: a, b, label/);
  });

  it('refuses a target with one class', async () => {
    expect(await refused(rows(40, () => 'yes'))).toMatch(/single class \(yes\)/);
  });

  it('refuses a dataset too small to split into halves that each hold two classes', async () => {
    // 9 rows with one of another class: some random half lacks it.
    expect(await refused(rows(10, (i) => (i === 3 ? 'b' : 'a')))).toMatch(/too small to split/);
    expect(await refused(rows(3, (i) => String(i % 2)))).toMatch(/at least 4 are needed/);
  });

  it('--help shows the DataSciCoding default of --eval-episodes (10, not 100)', async () => {
    const r = await h.run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--eval-episodes[^\n]*\(default:? 10\)/);
  });

  it('--dataset csv without --csv/--target is rejected with the fix', async () => {
    const r = await h.run([
      '--dataset',
      'csv',
      '--model',
      DEFAULT_MODEL,
      '--runs',
      runs,
      '--quiet',
    ]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/--csv FILE and --target COLUMN/);
  });
});
