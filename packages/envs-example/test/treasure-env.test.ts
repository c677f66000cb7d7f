import { checkEnv, InvalidActionError, makeEnv } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { registerExampleEnvs } from '../src/register.js';
import { createTreasureEnv } from '../src/treasure-env.js';

/** Finds a seed whose treasure lies in room `room` (1-based), by looking at the jingle. */
async function seedWithTreasureIn(room: number): Promise<number> {
  for (let seed = 0; seed < 1000; seed++) {
    const env = createTreasureEnv();
    await env.reset({ seed });
    for (let r = 1; r < room; r++) await env.step('go right');
    const dig = await env.step('dig here');
    if (dig.reward === 1) return seed;
  }
  throw new Error(`no seed puts the treasure in room ${room}`);
}

describe('example/treasure', () => {
  it('passes the conformance kit', async () => {
    const report = await checkEnv(() => createTreasureEnv(), { maxSteps: 10, episodes: 10 });
    expect(report.checks).toContain('determinism');
    expect(report.longestEpisode).toBeLessThanOrEqual(10);
  });

  it('offers only the moves the walls allow', async () => {
    const env = createTreasureEnv({ rooms: 3 });
    expect((await env.reset({ seed: 1 })).actions).toEqual(['go right', 'dig here']);
    expect((await env.step('go right')).actions).toEqual(['go left', 'go right', 'dig here']);
    expect((await env.step('go right')).actions).toEqual(['go left', 'dig here']);
    await expect(env.step('go right')).rejects.toBeInstanceOf(InvalidActionError);
  });

  it('rewards digging in the treasure room, discounted by 0.9 per step', async () => {
    const seed = await seedWithTreasureIn(3);
    const env = createTreasureEnv();
    const start = await env.reset({ seed });
    expect(start.observation).toContain('All is quiet.');
    const next = await env.step('go right');
    expect(next.observation).toContain('jingle');
    await env.step('go right');
    const dig = await env.step('dig here');
    expect(dig).toMatchObject({ reward: 1, terminated: true, truncated: false });
    expect(dig.info.discountedReturn as number).toBeCloseTo(0.81, 12);
    expect(dig.info.length).toBe(3);
  });

  it('truncates at the step limit', async () => {
    const env = createTreasureEnv({ maxSteps: 2 });
    await env.reset({ seed: 0 });
    await env.step('dig here'); // the treasure is never in the first room
    const last = await env.step('dig here');
    expect(last).toMatchObject({ reward: 0, terminated: false, truncated: true });
    expect(last.info).toMatchObject({ discountedReturn: 0, length: 2, success: false });
  });

  it('is available from the registry after registering', () => {
    registerExampleEnvs();
    expect(makeEnv('example/treasure').id).toBe('example/treasure');
  });
});
