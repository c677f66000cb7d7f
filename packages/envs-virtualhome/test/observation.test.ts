import { createRng } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createVirtualHomeEnv } from '../src/env.js';
import { VIRTUALHOME_TASKS } from '../src/tasks.js';

describe('observations', () => {
  it.each(VIRTUALHOME_TASKS)('%s: the text determines the valid set and reads cleanly', (task) => {
    const env = createVirtualHomeEnv(task);
    const rng = createRng(5);
    const setOfText = new Map<string, string>();
    const conflicts: string[] = [];
    for (let episode = 0; episode < 300; episode++) {
      let s = env.resetSync();
      for (;;) {
        const set = (s.actions ?? []).join('|');
        const seen = setOfText.get(s.observation);
        // the agent only sees the text, so equal texts must offer equal actions
        if (!s.terminated) {
          if (seen !== undefined && seen !== set) conflicts.push(s.observation);
          setOfText.set(s.observation, set);
        }
        if (s.terminated || s.truncated) break;
        s = env.stepSync(rng.choice(s.actions ?? []));
      }
    }
    expect(conflicts).toEqual([]);
    for (const text of setOfText.keys()) {
      expect(text.endsWith(', your next step is to')).toBe(true);
      expect(text).not.toMatch(/ {2}|opend|\. and|\.\./);
      expect(text).toMatch(/^The house has four rooms/);
    }
    expect(setOfText.size).toBeGreaterThan(5);
  });

  it('states the facts of the food-preparation state', () => {
    const env = createVirtualHomeEnv('food-preparation');
    expect(env.resetSync().observation).toBe(
      'The house has four rooms: the kitchen, the bathroom, the bedroom and the living room. You are in the kitchen. You see the pancake on the table and the microwave. You are not holding anything. You are not next to the pancake or the microwave. The microwave door is shut. To heat up the pancake in the microwave, your next step is to',
    );
    expect(env.stepSync('walk to the pancake').observation).toContain(
      'You are standing next to the pancake.',
    );
    expect(env.stepSync('grab the pancake').observation).toContain('You are holding the pancake.');
    expect(env.stepSync('walk to the microwave').observation).toContain(
      'You are holding the pancake. You are standing next to the microwave.',
    );
    expect(env.stepSync('open the microwave').observation).toContain('The microwave door is open.');
    expect(env.stepSync('put the pancake in the microwave').observation).toContain(
      'You see the microwave; the pancake is inside it. You are not holding anything. You are standing next to the microwave and the pancake.',
    );
    expect(env.stepSync('close the microwave').observation).toContain(
      'the pancake is shut inside it',
    );
  });

  it('states the facts of the entertainment state', () => {
    const env = createVirtualHomeEnv('entertainment');
    expect(env.resetSync().observation).toContain(
      'On the kitchen counter you see the chips and the milk.',
    );
    env.stepSync('walk to the chips');
    const held = env.stepSync('grab the chips').observation;
    expect(held).toContain('You are holding the chips.');
    expect(held).toContain('you see the milk');
    const living = env.stepSync('walk to the living room').observation;
    expect(living).toContain('You see a coffee table, a TV and a sofa.');
    expect(living).toContain('The TV is off.');
    env.stepSync('walk to the coffee table');
    expect(env.stepSync('put the chips on the coffee table').observation).toContain(
      'The chips are on the coffee table.',
    );
  });
});
