import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { DEFAULT_LIMITS } from '@poad/envs-datascicoding';
import { describe, expect, it } from 'vitest';
import { readPrograms } from '../src/programs.js';
import { dataSciApp, sandboxLimits } from '../src/spec.js';

// A program whose five fits take about 2 s in all (0.4 s each, plus the interpreter's work).
const SLOW = [
  'import time',
  '    from sklearn.linear_model import LogisticRegression',
  '    time.sleep(0.4)',
  '    model = LogisticRegression(max_iter=500)',
  '    model.fit(x_train, y_train)',
].join('\n');

describe('--timeout', () => {
  it('sets the wall-clock limit, with the CPU limit at twice it (never below the default)', () => {
    expect(sandboxLimits(undefined)).toBeUndefined();
    expect(sandboxLimits(60)).toEqual({ timeoutMs: 60_000, cpuSeconds: 120 });
    expect(sandboxLimits(10)).toEqual({ timeoutMs: 10_000, cpuSeconds: DEFAULT_LIMITS.cpuSeconds });
    // Under the CPU clock: the program's CPU seconds, with a wall-clock backstop of 10 times them.
    expect(sandboxLimits(10, 'cpu')).toEqual({ cpuSeconds: 10, timeoutMs: 100_000 });
    for (const bad of [0, -5, 2.5, 'ten']) {
      expect(() => sandboxLimits(bad)).toThrow(OptionError);
      expect(() => sandboxLimits(bad)).toThrow(/--timeout/);
    }
  });

  it('reaches the sandbox: the same program times out at 1 s and runs at 20 s', async () => {
    const score = async (timeout: number | undefined) => {
      const env = dataSciApp.makeEnv('iris', timeout === undefined ? {} : { timeout });
      try {
        await env.reset({ seed: 1 });
        return await env.step(SLOW);
      } finally {
        await env.close();
      }
    };
    const cut = await score(1);
    expect(cut.reward).toBe(-1);
    expect(cut.info).toMatchObject({ reason: 'timeout' });
    expect(String(cut.info.error)).toContain('within 1 s');
    const ran = await score(20);
    expect(ran.info.reason ?? null).toBeNull();
    expect(ran.reward).toBeGreaterThan(0.9);
    expect(Number(ran.info.durationMs)).toBeGreaterThan(1000);
  }, 60_000);

  it('is an optional whole number of seconds, its help giving the default', () => {
    const schema = dataSciApp.extraOptions ?? {};
    expect(schema.timeout).toMatchObject({ type: 'integer', optional: true, min: 1 });
    expect(String((schema.timeout as { description: string }).description)).toContain('default 30');
    // The clock and the seeding rule are env options, so a run's config.json records them.
    expect(schema.timeLimit).toMatchObject({
      type: 'enum',
      choices: ['wall', 'cpu'],
      default: 'wall',
    });
    expect(schema.scoring).toMatchObject({
      type: 'enum',
      choices: ['seeded-v1', 'os-seeded'],
      default: 'seeded-v1',
    });
  });

  it('--time-limit cpu reaches the sandbox: waiting is free, the CPU limit stops a busy program', async () => {
    const env = dataSciApp.makeEnv('iris', { timeout: 1, timeLimit: 'cpu' });
    try {
      await env.reset({ seed: 1 });
      // 2 s of sleep in all, which the 1 s wall-clock limit stops (above).
      const slept = await env.step(SLOW);
      expect(slept.info.reason ?? null).toBeNull();
      expect(slept.reward).toBeGreaterThan(0.9);
      await env.reset({ seed: 1 });
      const busy = await env.step(['import time', '    while True:', '        pass'].join('\n'));
      expect(busy.info).toMatchObject({ reason: 'cpu-limit' });
    } finally {
      await env.close();
    }
  }, 60_000);

  it('a program stopped at the limit is recorded as a timeout: its row in programs.jsonl and the timeouts column', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'poad-dsc-timeouts-'));
    const env = dataSciApp.makeEnv('iris', { timeout: 1 });
    try {
      await dataSciApp.beforeIteration?.({ task: 'iris' } as never);
      await env.reset({ seed: 1 });
      const cut = await env.step(SLOW);
      expect(cut.info.reason).toBe('timeout');
      const broken = await env.step('model = (');
      expect(broken.info.reason).toBe('syntax');
      // The iteration as the trainer reports it: two programs, one token each, both failed.
      const bodies: Record<number, string> = { 101: SLOW, 102: 'model = (' };
      const report = {
        iteration: 1,
        buffer: {
          size: 2,
          numEnvs: 1,
          rewards: Float32Array.from([-1, -1]),
          action: (i: number) => Int32Array.from([101 + i]),
        },
      };
      const agent = { tokenText: async (id: number) => bodies[id]! };
      const columns = await dataSciApp.onIteration?.(report as never, runDir, agent as never, {
        envSteps: 2,
      });
      expect(columns).toMatchObject({ timeouts: 1, programsRun: 0 });
      expect(readPrograms(runDir).map((r) => r.reason)).toEqual(['timeout', 'syntax']);
    } finally {
      await env.close();
      rmSync(runDir, { recursive: true, force: true });
    }
  }, 60_000);
});
