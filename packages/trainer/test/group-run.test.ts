// The group-relative algorithms (GRPO, RLOO, GiGPO of @poad/grpo) through the training command:
// K × G environments, a run directory without a value head, metrics with the groups' spread,
// resume bit for bit, the KL to the base model, and the refusals.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHarness, TINY_RUN } from './cli-harness.js';
import { metricsRows, tinyVirtualHomeApp } from './tiny-app.js';

// The tiny run without its --envs: a group algorithm runs groups × group-size environments.
const base = TINY_RUN.filter((a, i) => a !== '--envs' && TINY_RUN[i - 1] !== '--envs');
const h = cliHarness({
  base: ['--algo', 'gigpo', '--groups', '2', '--group-size', '2', ...base, '--threads', '1'],
  reference: tinyVirtualHomeApp,
});
const iterDir = (dir: string, it: number) =>
  join(dir, 'checkpoints', `iter-${String(it).padStart(8, '0')}`);

describe('--algo gigpo (and grpo, rloo)', () => {
  it('runs groups × group-size environments and writes a run directory without a value head', () => {
    const dir = h.dir('straight');
    const config = h.json<Record<string, unknown>>('straight', 'config.json');
    expect(config).toMatchObject({ algo: 'gigpo', groups: 2, groupSize: 2, envs: 4, omega: 1 });
    for (const k of ['criticLr', 'gaeLambda', 'estimator']) expect(k in config, k).toBe(false);
    const rows = metricsRows(dir);
    expect(rows.map((r) => r.iteration)).toEqual([1, 2, 3]);
    for (const r of rows) {
      expect(r.groupReturnSpread).toBeGreaterThanOrEqual(0);
      expect(
        r.zeroSpreadGroups === 0 || r.zeroSpreadGroups === 0.5 || r.zeroSpreadGroups === 1,
      ).toBe(true);
      expect(Number.isFinite(r.policyLoss)).toBe(true);
      // No critic: its columns are empty.
      expect(r.valueLoss).toBeNull();
      // Each group episode is cut at --num-steps 4: 4 envs × at most 4 steps.
      expect(r.envSteps! - (rows[r.iteration! - 2]?.envSteps ?? 0)).toBeLessThanOrEqual(16);
      // Every episode played counts, the cut ones as not successful.
      expect(r.episodes).toBe(4);
      // Every row of a group run has the count, 0 included.
      expect(typeof r.episodesCut).toBe('number');
      const cut = r.episodesCut!;
      expect(r.successRate).not.toBeNull();
      expect(r.successRate! * 4).toBeLessThanOrEqual(4 - cut);
    }
    // Four steps are too few for food-preparation: episodes are cut.
    expect(rows.some((r) => r.episodesCut! > 0)).toBe(true);
    const model = join(iterDir(dir, 3), 'model');
    expect(existsSync(join(model, 'adapter_model.safetensors'))).toBe(true);
    expect(existsSync(join(model, 'value_head.safetensors'))).toBe(false);
    expect(readFileSync(join(dir, 'token-credit.svg'), 'utf8')).toContain(
      'group-relative advantages',
    );
  });

  it('a run in two pieces equals the uninterrupted one bit for bit', async () => {
    expect((await h.run(h.newRun('pieces', 1))).code).toBe(0);
    const r = await h.run(['--resume', h.dir('pieces'), '--max-iterations', '3', '--quiet']);
    expect(r.code, r.out).toBe(0);
    expect(h.rows('pieces')).toEqual(h.rows('straight'));
    for (const f of ['model/adapter_model.safetensors', 'trainer.safetensors']) {
      const a = readFileSync(join(iterDir(h.dir('pieces'), 3), f));
      const b = readFileSync(join(iterDir(h.dir('straight'), 3), f));
      expect(a.equals(b), f).toBe(true);
    }
  });

  it('grpo with --kl-coef measures the KL to the base model; rloo runs too', async () => {
    const a = await h.run(h.newRun('grpo-kl', 1, ['--algo', 'grpo', '--kl-coef', '0.1']));
    expect(a.code, a.out).toBe(0);
    const [row] = h.rows('grpo-kl');
    expect(row!.klToReference).toBeGreaterThanOrEqual(0);
    expect(row!.klToReference).toBeLessThan(1);
    const b = await h.run(h.newRun('rloo', 1, ['--algo', 'rloo']));
    expect(b.code, b.out).toBe(0);
    expect(h.json('rloo', 'config.json')).toMatchObject({ algo: 'rloo', envs: 4 });
  });

  it('stops on env steps, not on a count of iterations (episodes vary in length)', async () => {
    // 4 envs × at most 4 steps per iteration: a count of iterations from --env-steps 40 would
    // stop after ⌊40 / 16⌋ = 2 iterations whatever the episodes took.
    const r = await h.run(h.newRun('budget', 1, ['--env-steps', '40', '--max-iterations', '100']));
    expect(r.code, r.out).toBe(0);
    const steps = metricsRows(h.dir('budget')).map((x) => x.envSteps!);
    expect(steps.at(-1)).toBeGreaterThanOrEqual(40);
    expect(steps.at(-2) ?? 0).toBeLessThan(40);
    // The last iteration is checkpointed, and the run ends as a finished one (perplexity after).
    expect(existsSync(iterDir(h.dir('budget'), steps.length))).toBe(true);
    expect(h.json<{ after?: number }>('budget', 'perplexity.json').after).toBeGreaterThan(1);
  });

  it('refuses --envs that disagrees with the groups, and a group size of 1', async () => {
    const a = await h.run(h.newRun('bad-envs', 1, ['--envs', '3']));
    expect(a.code).toBe(2);
    expect(a.out).toMatch(/command line --envs: --algo gigpo runs 4 here/);
    const b = await h.run(h.newRun('bad-g', 1, ['--group-size', '1']));
    expect(b.code).toBe(2);
    expect(b.out).toMatch(/--group-size: 1 is below the minimum 2/);
  });
});
