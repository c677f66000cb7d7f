import { createRng } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createVirtualHomeEnv } from '../src/env.js';
import { foodNouns, VIRTUALHOME_TASKS } from '../src/tasks.js';
import { indices } from './helpers.js';

const VARIANTS = [
  ['food-preparation/cheese', 'cheese', 'microwave'],
  ['food-preparation/hamburger', 'hamburger', 'microwave'],
  ['food-preparation/apple-pie', 'apple pie', 'microwave'],
  ['food-preparation/pizza', 'pizza', 'microwave'],
  ['food-preparation/washing-plate', 'dishes', 'dishwasher'],
  ['food-preparation/laundry', 'clothes', 'washing machine'],
] as const;

describe('food-preparation variants (envs.md §1.8)', () => {
  it('lists all eight tasks', () => {
    expect(VIRTUALHOME_TASKS).toHaveLength(8);
  });

  it.each(VARIANTS)('%s only swaps the nouns in the labels', (task, item, appliance) => {
    const env = createVirtualHomeEnv(task);
    expect(env.id).toBe(`virtualhome/${task}`);
    expect(env.allLabels).toEqual([
      'walk to the living room',
      'walk to the kitchen',
      'walk to the bathroom',
      'walk to the bedroom',
      `walk to the ${item}`,
      `walk to the ${appliance}`,
      `grab the ${item}`,
      `put the ${item} in the ${appliance}`,
      `open the ${appliance}`,
      `close the ${appliance}`,
    ]);
    const text = env.resetSync().observation;
    expect(text).toContain(`heat up the ${item} in the ${appliance}`);
    expect(text).not.toMatch(/pancake/);
  });

  it.each(VARIANTS)('%s has the dynamics of food preparation', (task) => {
    const base = createVirtualHomeEnv('food-preparation');
    const variant = createVirtualHomeEnv(task);
    const rng = createRng(11);
    for (let episode = 0; episode < 40; episode++) {
      let a = base.resetSync();
      let b = variant.resetSync();
      while (!a.terminated && !a.truncated) {
        expect(indices(variant, b)).toEqual(indices(base, a));
        const k = rng.choice(indices(base, a));
        a = base.stepSync(base.allLabels[k]!);
        b = variant.stepSync(variant.allLabels[k]!);
        expect([b.reward, b.terminated, b.truncated]).toEqual([
          a.reward,
          a.terminated,
          a.truncated,
        ]);
        expect(b.info).toEqual(a.info);
      }
    }
  });

  it('uses plural verbs for plural nouns', () => {
    expect(foodNouns('food-preparation/washing-plate').plural).toBe(true);
    const env = createVirtualHomeEnv('food-preparation/washing-plate');
    env.resetSync();
    for (const label of [
      'walk to the dishes',
      'grab the dishes',
      'walk to the dishwasher',
      'open the dishwasher',
      'put the dishes in the dishwasher',
      'close the dishwasher',
    ]) {
      const step = env.stepSync(label);
      if (step.terminated) expect(step.observation).toContain('the dishes are shut inside it');
    }
  });
});
