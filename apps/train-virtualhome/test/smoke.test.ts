// The practitioner's command, run for real as a child process on the embedded default model:
// --help, a 2-iteration run, --resume, Ctrl-C (saves and exits) and kill -9 (resume loses at
// most one iteration).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { spawnApp, waitFor } from '@poad/dev-kit';
import { afterAll, describe, expect, it } from 'vitest';

const runs = mkdtempSync(join(tmpdir(), 'poad-vh-smoke-'));
afterAll(() => rmSync(runs, { recursive: true, force: true }));
const tiny = [
  '--model',
  DEFAULT_MODEL,
  '--runs',
  runs,
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
];
const rows = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const app = 'apps/train-virtualhome/src/main.ts';

describe('npm run train:virtualhome', () => {
  it('--help lists every option with its default', async () => {
    const { code, out } = await spawnApp(app, ['--help']).done;
    expect(code).toBe(0);
    for (const flag of [
      '--task <food-preparation|entertainment>',
      '--algo <poad|ntpo|twosome|archer|etpo>',
      '--seed',
      '--model',
      '--config',
      '--resume',
      '--intra-gamma',
      '--intra-lambda',
      '--advantage-normalisation <mode>',
      '--beta',
      '--optimizer <adamw|lion>',
      '--lr',
    ]) {
      expect(out).toContain(flag);
    }
  });

  it('trains 2 iterations, then --resume continues to 3', async () => {
    const a = await spawnApp(app, [...tiny, '--run-name', 'r', '--max-iterations', '2', '--quiet'])
      .done;
    expect(a.code, a.out).toBe(0);
    expect(rows(join(runs, 'r'))).toHaveLength(2);
    expect(
      JSON.parse(readFileSync(join(runs, 'r', 'perplexity.json'), 'utf8')).after,
    ).toBeGreaterThan(1);
    const b = await spawnApp(app, ['--resume', join(runs, 'r'), '--max-iterations', '3', '--quiet'])
      .done;
    expect(b.code, b.out).toBe(0);
    expect(rows(join(runs, 'r')).map((r) => r.iteration)).toEqual([1, 2, 3]);
    // play: one greedy and one sampled episode of that checkpoint, step by step.
    const c = await spawnApp(app, ['play', '--resume', join(runs, 'r')]).done;
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('checkpoint: iteration 3');
    expect(c.out).toMatch(/one greedy episode[\s\S]*one sampled episode/);
    // Every step lists the valid actions with probabilities and marks the choice.
    expect(c.out).toMatch(/step 1: [^\n]*\n {2}0\.\d{3} {2}walk to the [^\n]*/);
    expect(c.out).toContain('<- chosen');
  });

  it('--eval-every records greedy evaluations with their env steps and wall time', async () => {
    const args = [...tiny.slice(0, -2), '--eval-episodes', '1', '--eval-every', '1'];
    const a = await spawnApp(app, [...args, '--run-name', 'ev', '--max-iterations', '2', '--quiet'])
      .done;
    expect(a.code, a.out).toBe(0);
    const evals = JSON.parse(readFileSync(join(runs, 'ev', 'greedy-evals.json'), 'utf8'));
    // After iteration 1 (the last iteration is covered by the final evaluation, eval.json).
    expect(evals).toHaveLength(1);
    expect(evals[0]).toMatchObject({ iteration: 1, envSteps: 8, episodes: 1 });
    expect(evals[0].wallSeconds).toBeGreaterThan(evals[0].evalSeconds);
    expect(evals[0].successRate).toBeGreaterThanOrEqual(0);
    const final = JSON.parse(readFileSync(join(runs, 'ev', 'eval.json'), 'utf8'));
    expect(final.iteration).toBe(2);
  });

  it('Ctrl-C saves a checkpoint and exits; kill -9 loses at most one iteration', async () => {
    const run = join(runs, 'int');
    const p = spawnApp(app, [...tiny, '--run-name', 'int', '--max-iterations', '50']);
    await waitFor(join(run, 'checkpoints', 'iter-00000001', 'meta.json'));
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.code, r.out).toBe(130);
    expect(r.out, r.out).toMatch(/--resume/);
    const saved = JSON.parse(readFileSync(join(run, 'checkpoints', 'latest.json'), 'utf8'))
      .iteration as number;
    expect(rows(run).length).toBe(saved);

    const q = spawnApp(app, ['--resume', run, '--quiet']);
    await waitFor(
      join(run, 'checkpoints', `iter-${String(saved + 1).padStart(8, '0')}`, 'meta.json'),
    );
    q.child.kill('SIGKILL');
    await q.done;
    const after = JSON.parse(readFileSync(join(run, 'checkpoints', 'latest.json'), 'utf8'))
      .iteration as number;
    expect(after).toBeGreaterThanOrEqual(saved + 1);
    const resumed = await spawnApp(app, [
      '--resume',
      run,
      '--max-iterations',
      String(after + 1),
      '--quiet',
    ]).done;
    expect(resumed.code, resumed.out).toBe(0);
    expect(rows(run).map((x) => x.iteration)).toEqual(
      Array.from({ length: after + 1 }, (_, i) => i + 1),
    );
  });

  it('rejects an unknown task before any work, listing the valid ones', async () => {
    const { code, out } = await spawnApp(app, ['--task', 'cooking']).done;
    expect(code).toBe(2);
    expect(out).toMatch(/food-preparation, entertainment/);
  });
});
