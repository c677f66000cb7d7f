import { deriveSeed, makeVecEnv } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createVirtualHomeEnv } from '../src/env.js';

describe('VirtualHome in a VecEnv', () => {
  it('auto-resets after the optimal episode and reports its stats', async () => {
    const vec = makeVecEnv(() => createVirtualHomeEnv('food-preparation'), 3, { seed: 9 });
    expect(vec.episodeSeed(1, 0)).toBe(deriveSeed(9, 1, 0));
    const start = await vec.reset();
    const plan = [
      'walk to the pancake',
      'grab the pancake',
      'walk to the microwave',
      'open the microwave',
      'put the pancake in the microwave',
      'close the microwave',
    ];
    let steps = start;
    for (const action of plan) {
      // env 0 follows the plan; envs 1 and 2 pace between rooms
      const others = steps.slice(1).map((s) => (s.actions as readonly string[])[0] as string);
      steps = await vec.step([action, ...others]);
    }
    const done = steps[0]!;
    expect(done.reward).toBe(1);
    expect(done.terminated).toBe(true);
    expect(done.observation).toBe(start[0]!.observation);
    expect(done.actions).toEqual(start[0]!.actions);
    expect(done.info.finalObservation).toContain('shut inside it');
    expect(done.info.finalActions).toEqual([
      'walk to the living room',
      'walk to the bathroom',
      'walk to the bedroom',
    ]);
    const episode = done.info.episode as { discountedReturn: number };
    expect(episode).toEqual({ discountedReturn: expect.any(Number), length: 6, success: true });
    expect(episode.discountedReturn).toBeCloseTo(0.95 ** 5, 6);
    expect(steps[1]!.terminated || steps[1]!.truncated).toBe(false);
    await vec.close();
  });
});
