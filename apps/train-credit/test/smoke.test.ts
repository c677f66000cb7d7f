// The command as a practitioner runs it, as a child process on the embedded default model.
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { TINY_RUN, trainingHarness } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';

// Without the perplexity passes (no test here reads perplexity.json; the two passes over the
// model's 200 held-out lines take longer than a tiny run's iterations).
const h = trainingHarness({
  app: 'apps/train-credit/src/main.ts',
  base: ['--model', DEFAULT_MODEL, ...TINY_RUN, '--perplexity-lines', '0'],
});

describe('npm run train:credit', () => {
  it('--help lists the eight tasks and every algorithm', async () => {
    const { code, out } = await h.run(['--help']);
    expect(code).toBe(0);
    expect(out).toContain(
      '--task <key-token|key-token-long|delayed|delayed-long|loop|loop-long|risky|risky-long>',
    );
    expect(out).toContain('--algo <poad|ntpo|twosome|archer|etpo|grpo|rloo|gigpo>');
    expect(out).toMatch(/credit accuracy/);
  });

  it('trains, records the credit accuracy, and resumes', async () => {
    const a = await h.run(h.args('r', 1, ['--task', 'risky']));
    expect(a.code, a.out).toBe(0);
    const b = await h.run(['--resume', h.dir('r'), '--max-iterations', '2', '--quiet']);
    expect(b.code, b.out).toBe(0);
    const rows = h.rows('r');
    expect(rows.map((r) => r.iteration)).toEqual([1, 2]);
    for (const r of rows) {
      expect(r.creditSteps).toBe(8);
      expect(r.creditAccuracy === null || Math.abs(r.creditAccuracy as number) <= 1).toBe(true);
    }
    expect(h.json<{ task: string; algo: string }>('r', 'config.json')).toMatchObject({
      task: 'risky',
      algo: 'poad',
    });
  });

  it('refuses an unknown task, naming the tasks', async () => {
    const { code, out } = await h.run(['--task', 'maze']);
    expect(code).toBe(2);
    expect(out).toMatch(/key-token/);
  });
});
