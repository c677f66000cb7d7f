// The critic's error beside credit accuracy in a credit-task report: per run the mean of its
// iterations, per setting mean ± std over seeds, and a dash for a setting without a critic.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { markdown, summarise } from '../src/report.js';

const base = mkdtempSync(join(tmpdir(), 'poad-critic-columns-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A finished run whose iterations logged these critic figures (none: no critic columns). */
function run(name: string, critic: { rmse: number; bias: number; rho: number | null }[] | null) {
  const dir = join(base, name);
  mkdirSync(dir);
  const rows = [0, 1].map((i) => ({
    iteration: i + 1,
    envSteps: 64 * (i + 1),
    episodes: 4,
    episodeReturn: 0.5,
    successRate: 0.5,
    creditAccuracy: 0.5,
    ...(critic
      ? {
          criticRmse: critic[i]!.rmse,
          criticBias: critic[i]!.bias,
          criticSpearman: critic[i]!.rho,
          criticPrefixes: 40,
        }
      : {}),
  }));
  writeFileSync(join(dir, 'metrics.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  writeFileSync(
    join(dir, 'eval.json'),
    JSON.stringify({ results: { 'delayed/greedy': { meanReturn: 0.5, successRate: 1 } } }),
  );
  return dir;
}

describe('critic error in the report', () => {
  it('averages each run over its iterations and the runs over seeds, beside credit accuracy', () => {
    const poad = summarise(
      {
        label: 'poad',
        runDirs: [
          // ρ undefined in one iteration (null in metrics.jsonl): the mean is over the other.
          run('poad-s1', [
            { rmse: 0.4, bias: 0.2, rho: 0.5 },
            { rmse: 0.2, bias: -0.1, rho: null },
          ]),
          run('poad-s2', [
            { rmse: 0.1, bias: -0.3, rho: 0.1 },
            { rmse: 0.3, bias: -0.1, rho: 0.3 },
          ]),
        ],
      },
      'delayed',
      1,
    );
    expect(poad.runs[0]!.criticError).toEqual({
      rmse: expect.closeTo(0.3, 12),
      bias: expect.closeTo(0.05, 12),
      spearman: 0.5,
    });
    expect(poad.runs[1]!.criticError).toEqual({
      rmse: expect.closeTo(0.2, 12),
      bias: expect.closeTo(-0.2, 12),
      spearman: expect.closeTo(0.2, 12),
    });
    // Over seeds: RMSE 0.25 ± 0.05, bias −0.075 ± 0.125, ρ 0.35 ± 0.15.
    expect(poad.criticError!.rmse[0]).toBeCloseTo(0.25, 12);
    expect(poad.criticError!.rmse[1]).toBeCloseTo(0.05, 12);
    expect(poad.criticError!.bias[0]).toBeCloseTo(-0.075, 12);
    expect(poad.criticError!.bias[1]).toBeCloseTo(0.125, 12);
    expect(poad.criticError!.spearman![0]).toBeCloseTo(0.35, 12);
    const grpo = summarise({ label: 'grpo', runDirs: [run('grpo-s1', null)] }, 'delayed', 1);
    expect(grpo.runs[0]!.criticError).toBeUndefined();
    expect(grpo.criticError).toBeUndefined();

    const md = markdown('t', 'compare …', [poad, grpo], 1);
    expect(md).toContain('| credit accuracy | critic V^π RMSE | critic bias | critic ρ |');
    const row = (label: string) => md.split('\n').find((l) => l.startsWith(`| ${label} |`))!;
    expect(row('poad')).toMatch(/\| 0\.250 ± 0\.050 \| −0\.075 ± 0\.125 \| 0\.350 ± 0\.150 \|$/);
    expect(row('grpo')).toMatch(/\| – \| – \| – \|$/);
    expect(md).toMatch(/Critic V\^π RMSE, bias and ρ:/);
  });

  it('shows no critic columns where no run logged them (runs made before they existed)', () => {
    const old = summarise({ label: 'old', runDirs: [run('old-s1', null)] }, 'delayed', 1);
    const md = markdown('t', 'compare …', [old], 1);
    expect(md).toContain('| credit accuracy |');
    expect(md).not.toContain('critic V^π RMSE');
  });
});
