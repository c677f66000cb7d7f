import { describe, expect, it } from 'vitest';
import { createVirtualHomeEnv } from '../src/env.js';
import { indices, run } from './helpers.js';

describe('opt-in quirk fixes', () => {
  it('deadlock: the kitchen offers the walk to the snack that can be seen', () => {
    const env = createVirtualHomeEnv('entertainment', { fixes: { deadlock: true } });
    env.resetSync();
    run(env, [4, 9, 0, 6, 11]); // chips, grab, living room, table, put chips
    const kitchen = env.stepSync('walk to the kitchen');
    expect(indices(env, kitchen)).toEqual([0, 2, 3, 5]);
    const steps = run(env, [5, 10, 0, 7, 13, 8, 15]); // milk, grab, living room, TV, on, sofa, sit
    expect(steps[6]!.reward).toBe(1);
  });

  it('sitting trap: seated, the agent may stand up', () => {
    const env = createVirtualHomeEnv('entertainment', { fixes: { sittingTrap: true } });
    env.resetSync();
    const seated = run(env, [0, 7, 13, 8, 15]);
    expect(indices(env, seated[4]!)).toEqual([1, 2, 3, 16]);
    const up = env.stepSync('stand up from the sofa');
    expect(up.info.executed).toBe(true);
    expect(env.stepSync('walk to the kitchen').info.executed).toBe(true);
  });

  it('offered no-ops: only state-changing actions are offered', () => {
    const env = createVirtualHomeEnv('entertainment', { fixes: { offeredNoOps: true } });
    env.resetSync();
    const tv = run(env, [4, 9, 5, 10, 0, 7])[5]!;
    // both hands full: neither TV switch would work
    expect(indices(env, tv)).toEqual([1, 2, 3, 6, 8]);
    const food = createVirtualHomeEnv('food-preparation', { fixes: { offeredNoOps: true } });
    food.resetSync();
    const near = run(food, [4, 6, 5])[2]!;
    // closed microwave: put-in and close are dropped
    expect(indices(food, near)).toEqual([0, 2, 3, 4, 8]);
    // seated without snacks nothing works: the set is kept rather than emptied
    const trap = createVirtualHomeEnv('entertainment', { fixes: { offeredNoOps: true } });
    trap.resetSync();
    expect(indices(trap, run(trap, [0, 7, 13, 8, 15])[4]!)).toEqual([1, 2, 3]);
  });

  it('teleport: walking to the held item keeps the agent in its room', () => {
    const env = createVirtualHomeEnv('food-preparation', { fixes: { teleport: true } });
    env.resetSync();
    const last = run(env, [4, 6, 0, 1, 4])[4]!;
    expect(last.observation).toContain('You are in the kitchen.');
    expect(indices(env, last)).toEqual([0, 2, 3, 4, 5]);
  });

  it('the defaults reproduce the quirks', () => {
    const env = createVirtualHomeEnv('entertainment');
    env.resetSync();
    expect(indices(env, run(env, [0, 7, 13, 8, 15])[4]!)).toEqual([1, 2, 3]);
  });
});
