import { describe, expect, it } from 'vitest';
import { checkEnv } from '../src/check-env.js';
import { ConformanceError, EnvArgumentError } from '../src/errors.js';
import { type GuessBug, GuessEnv } from './guess-env.js';

describe('checkEnv', () => {
  it('passes a conforming env and reports what it checked', async () => {
    const report = await checkEnv(() => new GuessEnv(), { maxSteps: 3, episodes: 8 });
    expect(report.envId).toBe('test/guess');
    expect(report.episodes).toBe(8);
    expect(report.longestEpisode).toBeLessThanOrEqual(3);
    expect(report.meanEpisodeLength).toBeGreaterThanOrEqual(1);
    expect(report.stepsPerSecond).toBeGreaterThan(0);
    expect(report.openActionSpace).toBe(false);
    expect(report.checks).toEqual(
      expect.arrayContaining([
        'reset',
        'labels',
        'rewards',
        'episode-limit',
        'episode-info',
        'episode-over',
        'not-reset',
        'invalid-action',
        'determinism',
        'close',
      ]),
    );
  });

  it('supports open action spaces through an action generator', async () => {
    const report = await checkEnv(() => new GuessEnv({ open: true }), {
      maxSteps: 3,
      actionGenerator: (_step, rng) => String(rng.int(5)),
      benchmarkSteps: 100,
    });
    expect(report.openActionSpace).toBe(true);
    expect(report.skipped.join()).toContain('invalid-action');
    await expect(checkEnv(() => new GuessEnv({ open: true }), { maxSteps: 3 })).rejects.toThrow(
      /actionGenerator/,
    );
  });

  const cases: Array<[GuessBug, string, number?]> = [
    ['comma-label', 'labels'],
    ['empty-list', 'labels'],
    ['nan-reward', 'rewards'],
    ['never-ends', 'episode-limit'],
    ['accepts-invalid', 'invalid-action'],
    ['invalid-mutates', 'determinism'],
    ['no-episode-over', 'episode-over'],
    ['no-not-reset', 'not-reset'],
    ['ignores-seed', 'determinism'],
    ['reset-leaks', 'determinism'],
    ['no-return-info', 'episode-info'],
    ['reset-reward', 'reset'],
  ];
  it.each(cases)('catches the %s defect in the "%s" check', async (bug, check) => {
    let err: unknown;
    try {
      await checkEnv(() => new GuessEnv({ bug }), { maxSteps: 3, episodes: 8, benchmarkSteps: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConformanceError);
    expect((err as ConformanceError).check).toBe(check);
    expect((err as Error).message).toContain('test/guess');
  });

  it('closes the envs it made when a check fails', async () => {
    let closes = 0;
    class Counted extends GuessEnv {
      override async close(): Promise<void> {
        closes += 1;
      }
    }
    await expect(
      checkEnv(() => new Counted({ bug: 'ignores-seed' }), { maxSteps: 3, benchmarkSteps: 0 }),
    ).rejects.toBeInstanceOf(ConformanceError);
    expect(closes).toBe(2);
  });

  it('reports the step limit it was given', async () => {
    await expect(
      checkEnv(() => new GuessEnv({ maxSteps: 3 }), {
        maxSteps: 2,
        episodes: 20,
        benchmarkSteps: 0,
      }),
    ).rejects.toThrow(/maxSteps=2/);
  });

  it('validates its own options', async () => {
    await expect(checkEnv(() => new GuessEnv(), { maxSteps: 0 })).rejects.toBeInstanceOf(
      EnvArgumentError,
    );
    await expect(
      checkEnv(() => new GuessEnv(), { maxSteps: 3, episodes: 0 }),
    ).rejects.toBeInstanceOf(EnvArgumentError);
  });
});
