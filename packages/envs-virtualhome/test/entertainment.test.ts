import { beforeEach, describe, expect, it } from 'vitest';
import { createVirtualHomeEnv, type VirtualHomeEnv } from '../src/env.js';
import { indices, run } from './helpers.js';

const LIVING = 0;
const KITCHEN = 1;
const BATHROOM = 2;
const CHIPS = 4;
const MILK = 5;
const TABLE = 6;
const TV = 7;
const SOFA = 8;
const GRAB_CHIPS = 9;
const GRAB_MILK = 10;
const PUT_CHIPS = 11;
const PUT_MILK = 12;
const TV_ON = 13;
const TV_OFF = 14;
const SIT = 15;
const STAND = 16;

describe('virtualhome/entertainment labels', () => {
  it('uses exactly the labels of envs.md §1.4', () => {
    expect(createVirtualHomeEnv('entertainment').allLabels).toEqual([
      'walk to the living room',
      'walk to the kitchen',
      'walk to the bathroom',
      'walk to the bedroom',
      'walk to the chips',
      'walk to the milk',
      'walk to the coffee table',
      'walk to the TV',
      'walk to the sofa',
      'grab the chips',
      'grab the milk',
      'put the chips on the coffee table',
      'put the milk on the coffee table',
      'turn on the TV',
      'turn off the TV',
      'sit on the sofa',
      'stand up from the sofa',
    ]);
  });
});

describe('virtualhome/entertainment scenarios (envs.md §5)', () => {
  let env: VirtualHomeEnv;
  beforeEach(() => {
    env = createVirtualHomeEnv('entertainment');
  });

  it('starts with {0,2,3,4,5}', () => {
    expect(indices(env, env.resetSync())).toEqual([0, 2, 3, 4, 5]);
  });

  it('V2-1: the optimal eleven steps succeed with logged return 0.95^10', () => {
    env.resetSync();
    const steps = run(env, [
      CHIPS,
      GRAB_CHIPS,
      MILK,
      GRAB_MILK,
      LIVING,
      TABLE,
      PUT_CHIPS,
      TV,
      TV_ON,
      SOFA,
      SIT,
    ]);
    expect(steps.slice(0, 10).map((s) => indices(env, s))).toEqual([
      [0, 2, 3, 5, 9],
      [0, 2, 3, 5],
      [0, 2, 3, 10],
      [0, 2, 3],
      [1, 2, 3, 6, 7, 8],
      [1, 2, 3, 7, 8, 11, 12],
      [1, 2, 3, 7, 8],
      [1, 2, 3, 6, 8, 13, 14],
      [1, 2, 3, 6, 8],
      [1, 2, 3, 6, 7, 15, 16],
    ]);
    expect(steps.slice(0, 10).every((s) => s.reward === 0 && !s.terminated)).toBe(true);
    const last = steps[10]!;
    expect(last.reward).toBe(1);
    expect(last.terminated).toBe(true);
    expect(last.info.discountedReturn as number).toBeCloseTo(0.5987369392, 6);
    expect(last.info.length).toBe(11);
  });

  it('V2-2: held snacks count through closeness', () => {
    env.resetSync();
    const steps = run(env, [
      LIVING,
      TV,
      TV_ON,
      KITCHEN,
      CHIPS,
      GRAB_CHIPS,
      MILK,
      GRAB_MILK,
      LIVING,
      SOFA,
      SIT,
    ]);
    expect(steps.slice(0, 10).every((s) => s.reward === 0 && !s.terminated)).toBe(true);
    expect(steps[10]!.reward).toBe(1);
    expect(steps[10]!.terminated).toBe(true);
    expect(steps[10]!.info.length).toBe(11);
    expect(steps[10]!.info.discountedReturn as number).toBeCloseTo(0.95 ** 10, 6);
  });

  it('V2-4: sitting without the snacks traps the agent until step 50', () => {
    env.resetSync();
    const seated = run(env, [LIVING, TV, TV_ON, SOFA, SIT]);
    expect(seated[4]!.reward).toBe(0);
    expect(seated[4]!.terminated).toBe(false);
    expect(indices(env, seated[4]!)).toEqual([1, 2, 3]);
    for (let t = 6; t <= 50; t++) {
      const s = env.stepSync(env.allLabels[[KITCHEN, BATHROOM, 3][t % 3]!]!);
      expect(s.info.executed).toBe(false);
      expect(indices(env, s)).toEqual([1, 2, 3]);
      expect(s.truncated).toBe(t === 50);
    }
  });

  it('quirk 1: putting one snack down first deadlocks the kitchen', () => {
    env.resetSync();
    run(env, [CHIPS, GRAB_CHIPS, LIVING, TABLE, PUT_CHIPS]);
    const kitchen = env.stepSync('walk to the kitchen');
    // only the milk is seen, and the offered walk targets the chips (on the coffee table)
    expect(indices(env, kitchen)).toEqual([0, 2, 3, 4]);
    const walk = env.stepSync('walk to the chips');
    expect(walk.info.executed).toBe(false);
    expect(walk.observation).toBe(kitchen.observation);
  });

  it('quirk 3: offered no-ops (TV on with full hands, TV off when off, stand up standing)', () => {
    env.resetSync();
    run(env, [CHIPS, GRAB_CHIPS, MILK, GRAB_MILK, LIVING]);
    const tv = env.stepSync('walk to the TV');
    expect(indices(env, tv)).toEqual([1, 2, 3, 6, 8, 13, 14]);
    expect(env.stepSync('turn on the TV').info.executed).toBe(false);
    expect(env.stepSync('turn off the TV').info.executed).toBe(false);
    run(env, [TABLE, PUT_MILK, TV]);
    expect(env.stepSync('turn on the TV').info.executed).toBe(true);
    const sofa = env.stepSync('walk to the sofa');
    expect(indices(env, sofa)).toContain(STAND);
    expect(env.stepSync('stand up from the sofa').info.executed).toBe(false);
    // milk on the table, chips in hand: sitting now succeeds at step 15
    const sit = env.stepSync('sit on the sofa');
    expect(sit.reward).toBe(1);
    expect(sit.info.length).toBe(15);
    expect(sit.info.discountedReturn as number).toBeCloseTo(0.95 ** 14, 6);
  });

  it('the coffee-table sets follow which snack is on the table', () => {
    env.resetSync();
    run(env, [CHIPS, GRAB_CHIPS, MILK, GRAB_MILK, LIVING, TABLE]);
    const put = env.stepSync('put the milk on the coffee table');
    // holding the chips with the milk on the table: the chips cannot be put down
    expect(indices(env, put)).toEqual([1, 2, 3, 7, 8]);
    env.resetSync();
    run(env, [MILK, GRAB_MILK, LIVING]);
    const table = env.stepSync('walk to the coffee table');
    expect(indices(env, table)).toEqual([1, 2, 3, 7, 8, 12]);
    const empty = env.stepSync('put the milk on the coffee table');
    expect(indices(env, empty)).toEqual([1, 2, 3]);
    expect(empty.observation).toMatch(/The milk is on the coffee table\./);
    // empty-handed at the coffee table only room walks are offered
    expect(indices(env, env.stepSync('walk to the bedroom'))).toEqual([0, 1, 2]);
  });

  it('the kitchen sets follow what is seen, held and close', () => {
    env.resetSync();
    expect(indices(env, env.stepSync('walk to the milk'))).toEqual([0, 2, 3, 4, 10]);
    expect(indices(env, env.stepSync('grab the milk'))).toEqual([0, 2, 3, 4]);
    expect(indices(env, env.stepSync('walk to the chips'))).toEqual([0, 2, 3, 9]);
    expect(indices(env, env.stepSync('grab the chips'))).toEqual([0, 2, 3]);
    env.resetSync();
    run(env, [CHIPS, GRAB_CHIPS, LIVING, TABLE, PUT_CHIPS, KITCHEN]);
    expect(indices(env, env.stepSync('walk to the living room'))).toEqual([1, 2, 3, 6, 7, 8]);
    expect(TV_OFF).toBe(14);
  });
});
