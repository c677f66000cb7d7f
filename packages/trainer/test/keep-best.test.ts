// The best checkpoint and the collapse monitor: the judge of the best and the monitor on
// metrics rows alone, then end to end on a tiny model (--keep-best, --checkpoint best, eval.json's
// best, --on-collapse rollback and stop, and a resume across a rollback that repeats it exactly).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32 } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import { CollapseMonitor, type CollapseRule, collapseRuleOf } from '../src/collapse-monitor.js';
import { BestTracker, parseKeepBest } from '../src/keep-best.js';
import { cliHarness, TINY_RUN } from './cli-harness.js';
import { metricsRows, tinyVirtualHomeApp as vh } from './tiny-app.js';

const rows = (values: readonly number[], field = 'meanReward') =>
  values.map((v, i) => ({ iteration: i + 1, [field]: v, minibatches: 4, skippedMinibatches: 0 }));

describe('the judge of the best checkpoint', () => {
  it('averages the last K values that exist, keeps the earlier of ties, and follows the direction', () => {
    const t = new BestTracker(parseKeepBest('meanReward:max@2'));
    const seen = rows([0.1, 0.5, 0.3, 0.7, 0.1]).map((r) => t.observe(r.iteration, r));
    // Means: –, 0.3, 0.4, 0.5, 0.4.
    expect(seen).toEqual([false, true, true, true, false]);
    expect(t.current).toEqual({ iteration: 4, value: 0.5 });
    const tie = new BestTracker(parseKeepBest('meanReward:max'));
    for (const r of rows([0.5, 0.5])) tie.observe(r.iteration, r);
    expect(tie.current?.iteration).toBe(1);
    const min = new BestTracker(parseKeepBest('valueLoss:min'));
    for (const r of rows([3, 1, 2], 'valueLoss')) min.observe(r.iteration, r);
    expect(min.current).toEqual({ iteration: 2, value: 1 });
    // Rows without the metric (between greedy evaluations) are not judged.
    const greedy = new BestTracker(parseKeepBest('greedySuccess:max'));
    expect(greedy.observe(1, { iteration: 1 })).toBe(false);
    expect(greedy.observe(2, { iteration: 2, greedySuccess: 0.5 })).toBe(true);
    expect(() => parseKeepBest('meanReward')).toThrow(/METRIC:max\|min\[@K\]/);
  });
});

describe('the collapse monitor', () => {
  const rule: CollapseRule = {
    watch: parseKeepBest('meanReward:max@5'),
    drop: 0.5,
    patience: 5,
    floors: { programsRun: 0.5 },
    maxSkipShare: 0.9,
  };
  const fires = (rs: readonly Record<string, unknown>[], r = rule) => {
    const m = new CollapseMonitor(r);
    return rs.map((row) => m.observe(row)).filter((a) => a !== null);
  };

  it('fires on a collapse, once per spell, naming the metric and its best', () => {
    // Learns for 40 iterations, then every program fails (reward −1).
    const curve = [...Array.from({ length: 40 }, (_, i) => -0.5 + i / 40), ...Array(20).fill(-1)];
    const alarms = fires(rows(curve));
    expect(alarms).toHaveLength(1);
    expect(alarms[0]!.check).toBe('meanReward');
    expect(alarms[0]!.reason).toMatch(
      /meanReward \(mean of 5\) -?[0-9.]+ is [0-9.]+ below its best/,
    );
    // The fall passes the drop at iteration 42 (mean of 5 ≈ 0.086 against 0.4 at 40… −0.1 at
    // 43): 5 iterations in a row from the first one below.
    expect(alarms[0]!.iteration).toBeGreaterThan(40);
    expect(alarms[0]!.iteration).toBeLessThanOrEqual(49);
  });

  it('stays quiet on a noisy but healthy curve, and fires on a broken floor or KL skips', () => {
    const r = mulberry32(7);
    const healthy = Array.from(
      { length: 200 },
      (_, i) => Math.min(0.9, i / 100) + (r() - 0.5) * 0.6,
    );
    expect(fires(rows(healthy))).toEqual([]);
    const failing = rows(healthy).map((row, i) => ({ ...row, programsRun: i >= 100 ? 0.2 : 0.9 }));
    expect(fires(failing).map((a) => [a.iteration, a.check])).toEqual([[105, 'programsRun']]);
    const skipping = rows(healthy).map((row, i) => ({
      ...row,
      skippedMinibatches: i >= 50 && i < 60 ? 4 : 0,
    }));
    expect(fires(skipping).map((a) => [a.iteration, a.check])).toEqual([[55, 'klSkips']]);
  });

  it('reads its rule from the run options', () => {
    expect(
      collapseRuleOf({
        keepBest: 'successRate:max@10',
        collapseDrop: 0.35,
        collapsePatience: 10,
        collapseFloors: 'labelMass:0.2,programsRun:0.5',
        maxKlSkipShare: 0.9,
      }),
    ).toEqual({
      watch: { metric: 'successRate', direction: 'max', window: 10 },
      drop: 0.35,
      patience: 10,
      floors: { labelMass: 0.2, programsRun: 0.5 },
      maxSkipShare: 0.9,
    });
  });
});

describe('a run keeps its best checkpoint and acts on a collapse', () => {
  const h = cliHarness({ base: TINY_RUN, spec: vh });
  // The smallest iteration is the best: iteration 1 stays best to the end.
  const KEEP_FIRST = ['--keep-best', 'iteration:min'];
  // A floor no iteration reaches: the monitor fires every 2 iterations of a spell.
  const ALWAYS = ['--collapse-floors', 'episodes:1000000', '--collapse-patience', '2'];

  it('writes checkpoints/best/, evaluates it beside the latest, and --checkpoint best loads it', async () => {
    const r = await h.run(h.newRun('best', 3, [...KEEP_FIRST, '--eval-episodes', '2']));
    expect(r.code, r.out).toBe(0);
    const best = JSON.parse(
      readFileSync(join(h.dir('best'), 'checkpoints', 'best', 'meta.json'), 'utf8'),
    );
    expect(best).toMatchObject({ iteration: 1, best: { rule: 'iteration:min', value: 1 } });
    const ev = h.json<{
      iteration: number;
      results: object;
      best: { iteration: number; results: object };
    }>('best', 'eval.json');
    expect(ev.iteration).toBe(3);
    expect(ev.best.iteration).toBe(1);
    expect(Object.keys(ev.best.results)).toEqual(Object.keys(ev.results));
    const e = await h.run(['eval', '--resume', h.dir('best'), '--checkpoint', 'best', '--quiet']);
    expect(e.code, e.out).toBe(0);
    expect(e.out).toContain('checkpoint: best, iteration 1');
    expect(existsSync(join(h.dir('best'), 'eval-iter-1.json'))).toBe(true);
    const bad = await h.run(['eval', '--resume', h.dir('best'), '--checkpoint', 'iter-9']);
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/no such checkpoint; it has: iter-3, iter-2, best/);
  });

  it('rolls back to the best with the learning rates cut, then stops after --max-rollbacks', async () => {
    const args = [...KEEP_FIRST, ...ALWAYS, '--on-collapse', 'rollback', '--max-rollbacks', '1'];
    const r = await h.run(h.newRun('rollback', 6, args));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(
      /collapse: iteration 2: episodes .* below the floor .*rolled back to the best checkpoint \(iteration 1\), learning rates × 0.5/,
    );
    expect(r.out).toMatch(/collapse: iteration 4: .*stopping here/);
    const rows = metricsRows(h.dir('rollback'));
    expect(rows.map((x) => x.iteration)).toEqual([1, 2, 3, 4]);
    expect(rows[1]).toMatchObject({ rollbacks: 1, lrScale: 0.5 });
    expect(rows[3]!.collapse).toMatch(/below the floor|above its best/);
    expect(rows[2]!.collapse).toBeUndefined();
    // The environment steps go on through the rollback.
    expect(rows.map((x) => x.envSteps)).toEqual(rows.map((_, i) => rows[0]!.envSteps! * (i + 1)));
  });

  it('a run resumed across a rollback repeats the uninterrupted one exactly', async () => {
    const args = [...KEEP_FIRST, ...ALWAYS, '--on-collapse', 'rollback', '--max-rollbacks', '1'];
    expect((await h.run(h.newRun('split', 3, args))).code).toBe(0);
    const r = await h.run(['--resume', h.dir('split'), '--max-iterations', '6', '--quiet']);
    expect(r.code, r.out).toBe(0);
    expect(metricsRows(h.dir('split'))).toEqual(metricsRows(h.dir('rollback')));
    const state = (d: string) =>
      readFileSync(join(h.dir(d), 'checkpoints', 'iter-00000004', 'trainer.safetensors'));
    expect(state('split').equals(state('rollback'))).toBe(true);
  });

  it('--on-collapse stop ends the run where the monitor fires; warn goes on', async () => {
    const stop = await h.run(h.newRun('stop', 5, [...ALWAYS, '--on-collapse', 'stop']));
    expect(stop.code, stop.out).toBe(0);
    expect(metricsRows(h.dir('stop')).map((x) => x.iteration)).toEqual([1, 2]);
    const warn = await h.run(h.newRun('warn', 3, ALWAYS));
    expect(warn.code, warn.out).toBe(0);
    expect(warn.out).toContain('(--on-collapse warn: training goes on)');
    expect(metricsRows(h.dir('warn')).map((x) => x.iteration)).toEqual([1, 2, 3]);
  });
});
