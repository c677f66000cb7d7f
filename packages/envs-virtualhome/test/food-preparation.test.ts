import { EpisodeOverError, InvalidActionError, NotResetError } from '@poad/envs-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { createVirtualHomeEnv, type VirtualHomeEnv } from '../src/env.js';
import { indices, run } from './helpers.js';

const WALK_LIVING = 0;
const WALK_KITCHEN = 1;
const WALK_BATHROOM = 2;
const WALK_BEDROOM = 3;
const WALK_PANCAKE = 4;
const WALK_MICROWAVE = 5;
const GRAB = 6;
const PUT_IN = 7;
const OPEN = 8;
const CLOSE = 9;

describe('virtualhome/food-preparation labels', () => {
  it('uses exactly the labels of envs.md §1.4', () => {
    const env = createVirtualHomeEnv('food-preparation');
    expect(env.id).toBe('virtualhome/food-preparation');
    expect(env.allLabels).toEqual([
      'walk to the living room',
      'walk to the kitchen',
      'walk to the bathroom',
      'walk to the bedroom',
      'walk to the pancake',
      'walk to the microwave',
      'grab the pancake',
      'put the pancake in the microwave',
      'open the microwave',
      'close the microwave',
    ]);
  });
});

describe('virtualhome/food-preparation scenarios (envs.md §5)', () => {
  let env: VirtualHomeEnv;
  beforeEach(() => {
    env = createVirtualHomeEnv('food-preparation');
  });

  it('starts in the kitchen with {0,2,3,4,5}', () => {
    const start = env.resetSync();
    expect(indices(env, start)).toEqual([0, 2, 3, 4, 5]);
    expect(start.reward).toBe(0);
    expect(start.observation).toMatch(/kitchen/);
    expect(start.observation.endsWith('your next step is to')).toBe(true);
  });

  it('V1-1: the optimal six steps succeed with logged return 0.95^5', () => {
    env.resetSync();
    const steps = run(env, [WALK_PANCAKE, GRAB, WALK_MICROWAVE, OPEN, PUT_IN, CLOSE]);
    expect(steps.slice(0, 5).map((s) => indices(env, s))).toEqual([
      [0, 2, 3, 5, 6],
      [0, 2, 3, 4, 5],
      [0, 2, 3, 4, 7, 8, 9],
      [0, 2, 3, 4, 7, 8, 9],
      [0, 2, 3, 8, 9],
    ]);
    expect(steps.slice(0, 5).every((s) => s.reward === 0 && !s.terminated && !s.truncated)).toBe(
      true,
    );
    const last = steps[5]!;
    expect(last.reward).toBe(1);
    expect(last.terminated).toBe(true);
    expect(last.truncated).toBe(false);
    expect(last.info.discountedReturn as number).toBeCloseTo(0.7737809375, 6);
    expect(last.info.length).toBe(6);
    expect(last.info.success).toBe(true);
    // the terminal state offers {0,2,3} (pancake invisible)
    expect(indices(env, last)).toEqual([0, 2, 3]);
    expect(() => env.stepSync('walk to the bathroom')).toThrow(EpisodeOverError);
  });

  it('V1-3: the held-item room tag teleports the agent to the living room', () => {
    env.resetSync();
    const steps = run(env, [WALK_PANCAKE, GRAB, WALK_LIVING, WALK_KITCHEN, WALK_PANCAKE]);
    const last = steps[4]!;
    expect(indices(env, last)).toEqual([1, 2, 3]);
    expect(last.observation).toMatch(/You are in the living room\./);
    expect(last.observation).toMatch(/holding the pancake/);
    expect(indices(env, steps[3]!)).toEqual([0, 2, 3, 4, 5]);
  });

  it('V1-4: alternating bathroom and bedroom is truncated at 50 steps with return 0', () => {
    env.resetSync();
    const actions = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0 ? WALK_BATHROOM : WALK_BEDROOM,
    );
    const steps = run(env, actions);
    steps.forEach((s, i) => {
      expect(indices(env, s)).toEqual(i % 2 === 0 ? [0, 1, 3] : [0, 1, 2]);
      expect(s.reward).toBe(0);
      expect(s.truncated).toBe(i === 49);
      expect(s.terminated).toBe(false);
    });
    expect(steps[49]!.info).toMatchObject({ discountedReturn: 0, length: 50, success: false });
  });

  it('rejected actions cost a step and change nothing (put into the closed microwave)', () => {
    env.resetSync();
    const [, , near] = run(env, [WALK_PANCAKE, GRAB, WALK_MICROWAVE]);
    const put = env.stepSync('put the pancake in the microwave');
    expect(put.info.executed).toBe(false);
    expect(put.observation).toBe(near!.observation);
    expect(put.actions).toEqual(near!.actions);
    // close on a closed microwave is offered and is a no-op too
    const shut = env.stepSync('close the microwave');
    expect(shut.info.executed).toBe(false);
    // the remaining optimal steps now finish at step 8: 0.95^7
    const rest = run(env, [OPEN, PUT_IN, CLOSE]);
    expect(rest[2]!.info.discountedReturn as number).toBeCloseTo(0.95 ** 7, 6);
    expect(rest[2]!.info.length).toBe(8);
  });

  it('the open microwave with the pancake inside needs the close to finish', () => {
    env.resetSync();
    run(env, [WALK_PANCAKE, GRAB, WALK_MICROWAVE, OPEN, PUT_IN]);
    const away = env.stepSync('walk to the bedroom');
    expect(indices(env, away)).toEqual([0, 1, 2]);
    const back = env.stepSync('walk to the kitchen');
    // nothing close: the pancake in the open microwave is still visible
    expect(indices(env, back)).toEqual([0, 2, 3, 4, 5]);
    const walk = env.stepSync('walk to the pancake');
    // walking to the pancake inside the microwave brings the agent close to both
    expect(indices(env, walk)).toEqual([0, 2, 3, 8, 9]);
    const done = env.stepSync('close the microwave');
    expect(done.reward).toBe(1);
    expect(done.info.discountedReturn as number).toBeCloseTo(0.95 ** 8, 6);
  });

  it('throws typed errors on misuse', () => {
    expect(() => env.stepSync('walk to the kitchen')).toThrow(NotResetError);
    env.resetSync();
    let err: unknown;
    try {
      env.stepSync('walk to the kitchen'); // a real label, but not offered in the kitchen
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidActionError);
    expect((err as InvalidActionError).validActions).toEqual([
      'walk to the living room',
      'walk to the bathroom',
      'walk to the bedroom',
      'walk to the pancake',
      'walk to the microwave',
    ]);
    expect(() => env.stepSync('fly to the moon')).toThrow(InvalidActionError);
    expect(() => createVirtualHomeEnv('cooking' as never)).toThrow(/food-preparation/);
    expect(() => createVirtualHomeEnv('food-preparation', { maxSteps: 0 })).toThrow(/maxSteps/);
  });

  it('the async interface gives the same steps as the sync one', async () => {
    const other = createVirtualHomeEnv('food-preparation');
    const a = await other.reset({ seed: 123 });
    const b = env.resetSync();
    expect(a).toEqual(b);
    expect(await other.step('walk to the pancake')).toEqual(env.stepSync('walk to the pancake'));
  });
});
