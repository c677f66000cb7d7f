// The practitioner's command, run for real as a child process on the embedded default model:
// --help, a 2-iteration run, --resume, Ctrl-C (saves and exits) and kill -9 (resume loses at
// most one iteration). The 2-iteration run measures the perplexity on all 200 held-out lines, as
// a default run does; the other runs, which read no perplexity, measure it on a few lines or not
// at all.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { TINY_RUN, trainingHarness, waitFor, waitUntil } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';

const h = trainingHarness({
  app: 'apps/train-virtualhome/src/main.ts',
  base: ['--model', DEFAULT_MODEL, ...TINY_RUN],
});

describe('npm run train:virtualhome', () => {
  it("--help lists the run options and the algorithm's config fields with their defaults", async () => {
    const { code, out } = await h.run(['--help']);
    expect(code).toBe(0);
    for (const flag of [
      '--task <food-preparation|entertainment>',
      '--algo <poad|ntpo|twosome|archer|etpo|grpo|rloo|gigpo>',
      '--preset <small|paper>',
      '--seed',
      '--model',
      '--config',
      '--resume',
      '--num-minibatches',
      '--gae-lambda',
      '--intra-gamma',
      '--intra-lambda',
      '--advantage-normalisation <mode>',
      '--lr',
    ])
      expect(out).toContain(flag);
    // The 'small' preset's values are the defaults shown.
    expect(out).toMatch(
      /--lr <num> +Actor \(LoRA\) learning rate, AdamW \[0, 1\] \(default: 0\.0005\)/,
    );
    // ETPO's own options are its help's, not POAD's.
    expect(out).not.toContain('--beta <num>');
    const etpo = await h.run(['--algo', 'etpo', '--help']);
    expect(etpo.code).toBe(0);
    for (const flag of [
      '--beta',
      '--tau',
      '--reference <base|uniform>',
      '--optimizer <adamw|lion>',
    ])
      expect(etpo.out).toContain(flag);
    expect(etpo.out).not.toContain('--clip <num>');
    expect(etpo.out).toContain('Algorithm etpo');
    // The group-relative methods show their group options and no critic's.
    const gigpo = await h.run(['--algo', 'gigpo', '--help']);
    expect(gigpo.code).toBe(0);
    for (const flag of ['--groups', '--group-size', '--omega', '--kl-coef'])
      expect(gigpo.out).toContain(flag);
    expect(gigpo.out).not.toContain('--critic-lr');
  });

  it('trains 2 iterations, then --resume continues to 3', async () => {
    const a = await h.run(h.args('r', 2));
    expect(a.code, a.out).toBe(0);
    expect(h.rows('r')).toHaveLength(2);
    expect(h.json<{ after: number }>('r', 'perplexity.json').after).toBeGreaterThan(1);
    const b = await h.run(['--resume', h.dir('r'), '--max-iterations', '3', '--quiet']);
    expect(b.code, b.out).toBe(0);
    expect(h.rows('r').map((r) => r.iteration)).toEqual([1, 2, 3]);
    // play: one greedy and one sampled episode of that checkpoint, step by step.
    const c = await h.run(['play', '--resume', h.dir('r')]);
    expect(c.code, c.out).toBe(0);
    expect(c.out).toContain('checkpoint: iteration 3');
    expect(c.out).toMatch(/one greedy episode[\s\S]*one sampled episode/);
    // Every step lists the valid actions with probabilities and marks the choice.
    expect(c.out).toMatch(/step 1: [^\n]*\n {2}0\.\d{3} {2}walk to the [^\n]*/);
    expect(c.out).toContain('<- chosen');
  });

  it('--eval-every records greedy evaluations with their env steps and wall time', async () => {
    // On entertainment, whose final evaluation is one task (food-preparation's adds its six
    // unseen variants); no perplexity passes.
    const a = await h.run(
      h.args('ev', 2, [
        '--task',
        'entertainment',
        '--eval-episodes',
        '1',
        '--eval-every',
        '1',
        '--perplexity-lines',
        '0',
      ]),
    );
    expect(a.code, a.out).toBe(0);
    const evals = h.json<Record<string, number>[]>('ev', 'greedy-evals.json');
    // After iteration 1 (the last iteration is covered by the final evaluation, eval.json).
    expect(evals).toHaveLength(1);
    expect(evals[0]).toMatchObject({ iteration: 1, envSteps: 8, episodes: 1 });
    expect(evals[0]!.wallSeconds).toBeGreaterThan(evals[0]!.evalSeconds!);
    expect(evals[0]!.successRate).toBeGreaterThanOrEqual(0);
    const final = h.json<{ iteration: number }>('ev', 'eval.json');
    expect(final.iteration).toBe(2);
  });

  it('Ctrl-C saves a checkpoint and exits; kill -9 loses at most one iteration', async () => {
    const run = h.dir('int');
    // No perplexity passes (the resumed runs keep the run's setting).
    const p = h.spawn(
      h.args('int', 50, ['--perplexity-lines', '0']).filter((a) => a !== '--quiet'),
    );
    await waitFor(join(run, 'checkpoints', 'iter-00000001', 'meta.json'));
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.code, r.out).toBe(130);
    expect(r.out, r.out).toMatch(/--resume/);
    const saved = h.json<{ iteration: number }>('int', 'checkpoints/latest.json')
      .iteration as number;
    expect(h.rows('int').length).toBe(saved);

    const q = h.spawn(['--resume', run, '--quiet']);
    // A checkpoint counts once latest.json names it: its folder is renamed into place first, so
    // a kill between the two leaves the previous one the latest.
    const latest = () => {
      try {
        return h.json<{ iteration: number }>('int', 'checkpoints/latest.json').iteration as number;
      } catch {
        return 0;
      }
    };
    await waitUntil(() => latest() >= saved + 1, `latest.json naming iteration ${saved + 1}`);
    q.child.kill('SIGKILL');
    await q.done;
    const after = h.json<{ iteration: number }>('int', 'checkpoints/latest.json')
      .iteration as number;
    expect(after).toBeGreaterThanOrEqual(saved + 1);
    const resumed = await h.run([
      '--resume',
      run,
      '--max-iterations',
      String(after + 1),
      '--quiet',
    ]);
    expect(resumed.code, resumed.out).toBe(0);
    expect(h.rows('int').map((x) => x.iteration)).toEqual(
      Array.from({ length: after + 1 }, (_, i) => i + 1),
    );
  });

  it('Ctrl-C in the final evaluation ends it without eval.json; --resume evaluates again', async () => {
    const run = h.dir('final');
    // One episode per evaluation set: the final evaluation of food-preparation is still 14 sets
    // (7 tasks, greedy and sampled), and a signal ends it after the set under way. The perplexity
    // on 4 held-out lines: its `after` entry is the sign that the final evaluation starts.
    const p = h.spawn(
      h
        .args('final', 1, ['--eval-episodes', '1', '--perplexity-lines', '4'])
        .filter((a) => a !== '--quiet'),
    );
    // perplexity.json gets its `after` entry just before the final evaluation starts.
    const perplexity = join(run, 'perplexity.json');
    await waitUntil(
      () =>
        existsSync(perplexity) &&
        'after' in (JSON.parse(readFileSync(perplexity, 'utf8')) as object),
      'the final evaluation to start',
    );
    p.child.kill('SIGINT');
    const r = await p.done;
    expect(r.code, r.out).toBe(130);
    expect(r.out).toContain('stopping after this evaluation');
    expect(r.out).toMatch(
      /stopped after iteration 1\/1, during the final evaluation \(resuming evaluates again\); continue with --resume /,
    );
    expect(existsSync(join(run, 'eval.json'))).toBe(false);
    const resumed = await h.run(['--resume', run, '--quiet']);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toMatch(/eval food-preparation \(greedy\): success [\d.]+%/);
    expect(h.json<{ iteration: number }>('final', 'eval.json').iteration).toBe(1);
    expect(h.rows('final').map((x) => x.iteration)).toEqual([1]);
  });

  it('rejects an unknown task before any work, listing the valid ones', async () => {
    const { code, out } = await h.run(['--task', 'cooking']);
    expect(code).toBe(2);
    expect(out).toMatch(/food-preparation, entertainment/);
  });
});
