import type { Rng } from '@poad/envs-core';

// Procedural common sense for the informative-prior variant of the default model: how one uses
// appliances, containers and food in general (open a door before putting something in, close it
// and switch the appliance on to heat, hold a thing before putting it somewhere, chop before
// serving), written as rules and as step-by-step procedures in the verb forms the environments'
// action labels use, and as demonstrations in the environment's own layout on foods and
// appliances no task uses (layoutDemonstrations). It stands in for what a large pretrained
// model knows about kitchens.
//
// It never states a task's solution: no line pairs a food of VirtualHome's food-preparation task
// or its evaluation variants (pancake, cheese, hamburger, apple pie, pizza) with the microwave,
// nor the dishes with the dishwasher or the clothes with the washing machine (the washing-plate
// and laundry variants); none mentions the TV, the sofa or chips (entertainment), and no
// Overcooked ingredient or recipe (tomato, lettuce, onion, salad) appears.

/** Foods of the tasks and their variants: never used in a procedure with the microwave. */
export const TASK_FOODS = ['pancake', 'cheese', 'hamburger', 'apple pie', 'pizza'] as const;

const heatableFoods = [
  'soup',
  'rice',
  'bread',
  'egg',
  'pasta',
  'potato',
  'coffee',
  'tea',
  'stew',
  'noodles',
  'beans',
  'porridge',
  'sausage',
  'fish',
  'chicken',
  'corn',
  'dumplings',
  'leftovers',
];
const chillableFoods = ['milk', 'juice', 'butter', 'yogurt', 'water', 'soup', 'fruit'];
const choppableFoods = ['carrot', 'potato', 'cucumber', 'pepper', 'bread', 'apple', 'banana'];

/** Appliances with a door that heat what is put inside once closed and switched on. */
const heaters = ['microwave', 'oven', 'toaster oven'];
/** Containers with a door that keep things; nothing to switch on. */
const stores = ['fridge', 'cabinet', 'cupboard', 'freezer', 'drawer'];
/** Appliances that clean what is put inside. */
const cleaners: [string, string[]][] = [
  ['dishwasher', ['plate', 'bowl', 'cup', 'glass', 'pan']],
  ['washing machine', ['shirt', 'towel', 'socks', 'jacket', 'sheets']],
];
const surfaces = ['table', 'counter', 'shelf', 'desk', 'kitchen table', 'dining table', 'bench'];

/** A food that may go into `appliance` in a procedure (no task food with the microwave). */
function foodFor(r: Rng, appliance: string, foods: readonly string[]): string {
  const allowed =
    appliance === 'microwave'
      ? foods.filter((f) => !(TASK_FOODS as readonly string[]).includes(f))
      : foods;
  return r.choice(allowed);
}

/** "walk to the soup, grab the soup, …": steps in the labels' verb forms. */
function steps(list: string[]): string {
  return list.join(', ');
}

const procedures: ((r: Rng) => string)[] = [
  (r) => {
    const h = r.choice(heaters);
    const f = foodFor(r, h, heatableFoods);
    return `${r.choice(purposes)} the ${f}: ${steps([`walk to the ${f}`, `grab the ${f}`, `walk to the ${h}`, `open the ${h}`, `put the ${f} in the ${h}`, `close the ${h}`, `switch on the ${h}`])}.`;
  },
  (r) => {
    const s = r.choice(stores);
    const f = r.choice(chillableFoods);
    return `To put the ${f} away: ${steps([`grab the ${f}`, `walk to the ${s}`, `open the ${s}`, `put the ${f} in the ${s}`, `close the ${s}`])}.`;
  },
  (r) => {
    const [c, items] = r.choice(cleaners);
    const x = r.choice(items);
    return `To clean the ${x}: ${steps([`grab the ${x}`, `walk to the ${c}`, `open the ${c}`, `put the ${x} in the ${c}`, `close the ${c}`, `switch on the ${c}`])}.`;
  },
  (r) => {
    const f = r.choice(choppableFoods);
    return `To serve the ${f}: ${steps([`pick up the ${f}`, `put the ${f} on the cutting board`, `chop the ${f}`, `put the chopped ${f} on a plate`, `serve the plate`])}.`;
  },
  (r) => {
    const s = r.choice(stores);
    const f = r.choice(chillableFoods);
    return `To take the ${f} out: ${steps([`walk to the ${s}`, `open the ${s}`, `grab the ${f}`, `close the ${s}`])}.`;
  },
  (r) => {
    const f = r.choice([...heatableFoods, ...choppableFoods]);
    const t = r.choice(surfaces);
    return `To move the ${f}: ${steps([`walk to the ${f}`, `grab the ${f}`, `walk to the ${t}`, `put the ${f} on the ${t}`])}.`;
  },
];

const purposes = ['To heat', 'To warm up', 'To cook', 'To reheat'];
const rooms = ['kitchen', 'living room', 'bedroom', 'bathroom'];

/** A situation and the sensible next step in it (for things that are not the tasks'). */
const nextSteps: ((r: Rng) => string)[] = [
  (r) => {
    const f = r.choice([...heatableFoods, ...chillableFoods]);
    return `The ${f} is on the ${r.choice(surfaces)} across the ${r.choice(rooms)}. Next: walk to the ${f}.`;
  },
  (r) => {
    const f = r.choice([...heatableFoods, ...chillableFoods]);
    return `You are standing next to the ${f}. Next: grab the ${f}.`;
  },
  (r) => {
    const h = r.choice([...heaters, ...stores]);
    const f = foodFor(r, h, heatableFoods);
    return `You hold the ${f}, and the ${h} is far away. Next: walk to the ${h}.`;
  },
  (r) => {
    const h = r.choice([...heaters, ...stores]);
    const f = foodFor(r, h, heatableFoods);
    return `You hold the ${f} next to the closed ${h}. Next: open the ${h}.`;
  },
  (r) => {
    const h = r.choice([...heaters, ...stores]);
    const f = foodFor(r, h, heatableFoods);
    return `You hold the ${f} next to the open ${h}. Next: put the ${f} in the ${h}.`;
  },
  (r) => {
    const h = r.choice(heaters);
    const f = foodFor(r, h, heatableFoods);
    return `The ${f} is inside the ${h} and its door is open. Next: close the ${h}.`;
  },
  (r) => {
    const h = r.choice(heaters);
    const f = foodFor(r, h, heatableFoods);
    return `The ${f} is inside the closed ${h}. Next: switch on the ${h}.`;
  },
];

const rules: ((r: Rng) => string)[] = [
  (r) => {
    const a = r.choice([...heaters, ...stores, 'dishwasher', 'washing machine']);
    return `Open the ${a} before you put something in it.`;
  },
  (r) => {
    const a = r.choice([...heaters, ...stores]);
    return `You cannot put anything in the ${a} while the ${a} is closed.`;
  },
  (r) => {
    const h = r.choice(heaters);
    return `The ${h} only heats food when its door is closed and it is switched on.`;
  },
  (r) => {
    const h = r.choice(heaters);
    const f = foodFor(r, h, heatableFoods);
    return `After you put the ${f} in the ${h}, close the ${h} and switch it on.`;
  },
  (r) => {
    const x = r.choice([...heatableFoods, ...choppableFoods, 'plate', 'cup', 'book']);
    return `You have to hold the ${x} before you can put it somewhere.`;
  },
  (r) => {
    const x = r.choice([...heatableFoods, ...choppableFoods, 'plate', 'cup', 'towel']);
    return `Walk to the ${x} first; you can only grab things that are close to you.`;
  },
  (r) => {
    const f = r.choice(choppableFoods);
    return `Chop the ${f} on the cutting board before you put it on a plate.`;
  },
  (r) => {
    const a = r.choice(stores);
    return `Close the ${a} when you are done with it.`;
  },
  (r) => {
    const a = r.choice([...heaters, ...stores]);
    return `Opening the ${a} again and again does not help; open it once, then use it.`;
  },
  (r) => {
    const a = r.choice(['lamp', 'radio', 'kettle', 'fan', 'computer']);
    return `${r.choice(['Switch on', 'Turn on'])} the ${a} to use it, and switch it off afterwards.`;
  },
];

/**
 * `count` lines of procedural common sense, seeded: step-by-step procedures (40%), situations
 * with their sensible next step (30%) and rules (30%). See the file comment for what is left out.
 */
export function commonSenseText(rng: Rng, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const u = rng.float();
    const make =
      u < 0.4 ? rng.choice(procedures) : u < 0.7 ? rng.choice(nextSteps) : rng.choice(rules);
    out.push(make(rng));
  }
  return out;
}

/** The nouns of food-preparation's own observations, replaced in the demonstrations below. */
const TASK_ITEM = 'pancake';
const TASK_APPLIANCE = 'microwave';

/**
 * The sensible next step in a food-preparation observation (pancake and microwave): go to the
 * kitchen, walk to the item, grab it, walk to the appliance, open it, put the item in, close it.
 */
export function sensibleNextStep(observation: string): string {
  const [item, appliance] = [TASK_ITEM, TASK_APPLIANCE];
  if (!observation.includes('You are in the kitchen.')) return 'walk to the kitchen';
  if (observation.includes(`the ${item} is inside it`)) {
    return observation.includes(`You are not next to`)
      ? `walk to the ${appliance}`
      : `close the ${appliance}`;
  }
  if (observation.includes(`You are holding the ${item}.`)) {
    if (observation.includes(`You are not next to the ${appliance}.`)) {
      return `walk to the ${appliance}`;
    }
    if (observation.includes(`The ${appliance} door is shut.`)) return `open the ${appliance}`;
    return `put the ${item} in the ${appliance}`;
  }
  return observation.includes(`and the ${item}.`) ||
    observation.includes(`You are standing next to the ${item}.`)
    ? `grab the ${item}`
    : `walk to the ${item}`;
}

/**
 * Demonstrations in the environment's own layout ("<observation> <action>") on foods and
 * heating appliances that no task uses: states are visited by random play in food-preparation,
 * then its nouns are replaced (pancake → e.g. soup, microwave → e.g. oven) and the line ends
 * with the sensible next step instead of the random one. A task food never appears with the
 * microwave, and no variant's item or appliance (dishes, dishwasher, clothes, washing machine)
 * appears at all, so no line states a task's solution; what carries over is the procedure.
 */
export async function layoutDemonstrations(
  rng: Rng,
  episodes: number,
  env: {
    reset(o: { seed: number }): Promise<{
      observation: string;
      actions: readonly string[] | null;
      terminated: boolean;
      truncated: boolean;
    }>;
    step(a: string): Promise<{
      observation: string;
      actions: readonly string[] | null;
      terminated: boolean;
      truncated: boolean;
    }>;
  },
): Promise<string[]> {
  const lines: string[] = [];
  for (let e = 0; e < episodes; e++) {
    const appliance = rng.choice(heaters);
    const item = foodFor(rng, appliance, heatableFoods);
    const swap = (s: string) => s.replaceAll(TASK_ITEM, item).replaceAll(TASK_APPLIANCE, appliance);
    let step = await env.reset({ seed: 50_000 + e });
    for (let t = 0; t < 30 && !(step.terminated || step.truncated); t++) {
      const actions = step.actions;
      if (!actions || actions.length === 0) break;
      const next = sensibleNextStep(step.observation);
      if (!actions.includes(next)) {
        throw new Error(`sensibleNextStep: ${next} is not offered in: ${step.observation}`);
      }
      lines.push(`${swap(step.observation)} ${swap(next)}`);
      // Half the time the sensible step, else a random one: states off the path are visited too.
      step = await env.step(rng.float() < 0.5 ? next : rng.choice(actions));
    }
  }
  return lines;
}
