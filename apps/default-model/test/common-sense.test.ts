import { createRng } from '@poad/envs-core';
import { createVirtualHomeEnv } from '@poad/envs-virtualhome';
import { describe, expect, it } from 'vitest';
import {
  commonSenseText,
  layoutDemonstrations,
  sensibleNextStep,
  TASK_FOODS,
} from '../src/common-sense.js';
import { buildCorpus } from '../src/corpus.js';
import { optimalLabels } from '../src/prior-report.js';

const small = { seed: 3, episodes: 3, sentences: 300, heldOut: 0.1 };

describe('procedural common sense (informative-prior variant)', () => {
  const lines = commonSenseText(createRng(5), 5000);

  it('teaches the general procedures: open before putting in, close and switch on to heat, chop before serving', () => {
    expect(
      lines.some((l) =>
        /open the (\w+ )*(\w+), put the .* in the \2, close the \2, switch on the \2/.test(l),
      ),
    ).toBe(true);
    expect(lines.some((l) => /Open the .* before you put something in it\./.test(l))).toBe(true);
    expect(lines.some((l) => /chop the .*, put the chopped/.test(l))).toBe(true);
    expect(new Set(lines).size).toBeGreaterThan(1000);
    expect(
      lines.some((l) => /You hold the .* next to the closed (.*)\. Next: open the \1\./.test(l)),
    ).toBe(true);
  });

  it("never states a task's solution: no task item with its appliance, nothing of entertainment or Overcooked", () => {
    for (const l of lines) {
      if (/microwave/.test(l)) for (const f of TASK_FOODS) expect(l.includes(f), l).toBe(false);
      expect(/\bTV\b|sofa|chips/.test(l), l).toBe(false);
      expect(/tomato|lettuce|onion|salad/.test(l), l).toBe(false);
      expect(/dishwasher/.test(l) && /dishes/.test(l), l).toBe(false);
      expect(/washing machine/.test(l) && /clothes/.test(l), l).toBe(false);
    }
  });

  it('leaves the default corpus unchanged and only adds lines to the variant', async () => {
    const base = await buildCorpus(small);
    expect(await buildCorpus({ ...small, commonSense: 0 })).toEqual(base);
    const rich = await buildCorpus({ ...small, commonSense: 500 });
    const all = new Set([...rich.train, ...rich.heldOut]);
    for (const l of [...base.train, ...base.heldOut]) expect(all.has(l)).toBe(true);
    expect(all.size).toBeGreaterThan(base.train.length + base.heldOut.length + 100);
  });

  it("the sensible next step follows food-preparation's optimal path from its first observation", async () => {
    const env = createVirtualHomeEnv('food-preparation');
    let step = await env.reset({ seed: 3 });
    const taken: string[] = [];
    while (!step.terminated && taken.length < 10) {
      const next = sensibleNextStep(step.observation);
      expect(step.actions).toContain(next);
      taken.push(next);
      step = await env.step(next);
    }
    expect(step.reward).toBe(1);
    expect(taken).toEqual(optimalLabels('pancake', 'microwave'));
  });

  it('demonstrations are in the layout the agent scores, on foods and appliances no task uses', async () => {
    const lines = await layoutDemonstrations(
      createRng(2),
      60,
      createVirtualHomeEnv('food-preparation'),
    );
    expect(lines.length).toBeGreaterThan(200);
    for (const l of lines) {
      expect(l.startsWith('The house has four rooms:'), l).toBe(true);
      const m = /To heat up the (.+) in the (.+), your next step is to (.+)$/.exec(l);
      expect(m, l).not.toBeNull();
      const [, item, appliance, action] = m!;
      expect(['microwave', 'oven', 'toaster oven']).toContain(appliance);
      expect(TASK_FOODS as readonly string[]).not.toContain(item);
      expect(/pancake|dishes|clothes|dishwasher|washing machine/.test(l), l).toBe(false);
      expect(['walk to the kitchen', ...optimalLabels(item!, appliance!)], l).toContain(action);
    }
    // Off-path states too: another room, the item already inside with the door open.
    expect(lines.some((l) => l.endsWith('walk to the kitchen'))).toBe(true);
    expect(lines.some((l) => /inside it\..*close the/.test(l))).toBe(true);
  });
});
