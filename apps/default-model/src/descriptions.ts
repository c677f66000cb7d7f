import type { Rng } from '@poad/envs-core';

// Plain descriptive sentences about homes, objects and cooking. They give the default model a
// general language prior over the words the environments use, without any hint about which
// action solves a task.

const rooms = ['kitchen', 'living room', 'bedroom', 'bathroom', 'hallway', 'dining room'];
const appliances = [
  'microwave',
  'oven',
  'stove',
  'fridge',
  'dishwasher',
  'washing machine',
  'toaster',
  'kettle',
];
const furniture = [
  'table',
  'sofa',
  'chair',
  'bed',
  'shelf',
  'counter',
  'desk',
  'cabinet',
  'coffee table',
];
const foods = [
  'pancake',
  'cheese',
  'hamburger',
  'apple pie',
  'pizza',
  'chips',
  'milk',
  'bread',
  'soup',
  'salad',
  'egg',
  'rice',
  'tomato',
  'lettuce',
  'onion',
  'cucumber',
  'apple',
  'banana',
];
const things = [
  'plate',
  'bowl',
  'cup',
  'knife',
  'cutting board',
  'towel',
  'remote control',
  'book',
  'lamp',
  'clothes',
  'basket',
  'pan',
  'pot',
  'glass',
  'spoon',
  'fork',
  'TV',
  'radio',
];
const adjectives = [
  'clean',
  'dirty',
  'warm',
  'cold',
  'fresh',
  'empty',
  'full',
  'small',
  'large',
  'old',
  'new',
  'bright',
  'quiet',
  'tidy',
];
const people = ['The agent', 'A person', 'The cook', 'The robot', 'Someone', 'The helper'];
const verbs = [
  'walks to',
  'looks at',
  'picks up',
  'puts down',
  'opens',
  'closes',
  'cleans',
  'carries',
  'checks',
  'moves',
];
const states = [
  'open',
  'closed',
  'switched on',
  'switched off',
  'on the table',
  'in the fridge',
  'on the counter',
  'in the sink',
];
const chefs = ['chops', 'slices', 'washes', 'serves', 'mixes', 'heats', 'cooks'];

const templates: ((r: Rng) => string)[] = [
  (r) => `The ${r.choice(rooms)} has a ${r.choice(furniture)} and a ${r.choice(appliances)}.`,
  (r) => `${r.choice(people)} ${r.choice(verbs)} the ${r.choice(things)}.`,
  (r) => `${r.choice(people)} ${r.choice(verbs)} the ${r.choice(foods)} in the ${r.choice(rooms)}.`,
  (r) => `There is a ${r.choice(adjectives)} ${r.choice(things)} on the ${r.choice(furniture)}.`,
  (r) => `The ${r.choice(appliances)} is ${r.choice(states)}.`,
  (r) => `The ${r.choice(foods)} is ${r.choice(states)}.`,
  (r) =>
    `You can heat a ${r.choice(foods)} in the ${r.choice(['microwave', 'oven', 'pan', 'pot'])}.`,
  (r) =>
    `A ${r.choice(foods)} tastes better when it is ${r.choice(['warm', 'fresh', 'cold', 'chopped', 'cooked'])}.`,
  (r) => `The cook ${r.choice(chefs)} the ${r.choice(foods)} on the cutting board.`,
  (r) => `Put the chopped ${r.choice(foods)} on a plate before you serve it.`,
  (r) => `A salad can have ${r.choice(foods)}, ${r.choice(foods)} and ${r.choice(foods)}.`,
  (r) =>
    `The ${r.choice(rooms)} is ${r.choice(['quiet', 'bright', 'warm', 'tidy', 'busy', 'dark'])} today.`,
  (r) => `From the ${r.choice(rooms)} you can walk to the ${r.choice(rooms)}.`,
  (_r) => `People watch TV on the sofa in the living room.`,
  (r) => `The fridge keeps ${r.choice(foods)} and ${r.choice(foods)} cold.`,
  (r) =>
    `Close the ${r.choice(['fridge', 'microwave', 'oven', 'cabinet', 'dishwasher'])} after you take something out.`,
  (r) => `The ${r.choice(things)} is next to the ${r.choice(things)}.`,
  (r) => `In the ${r.choice(rooms)} there is a ${r.choice(adjectives)} ${r.choice(furniture)}.`,
  (r) =>
    `${r.choice(people)} is ${r.choice(['hungry', 'tired', 'bored', 'busy', 'happy'])} and goes to the ${r.choice(rooms)}.`,
  (r) =>
    `A ${r.choice(appliances)} needs to be ${r.choice(['opened', 'switched on', 'cleaned', 'closed'])} first.`,
  (r) =>
    `The ${r.choice(foods)} is ${r.choice(['in', 'on', 'next to', 'under', 'behind'])} the ${r.choice(things)}.`,
  (r) =>
    `Take the ${r.choice(foods)} to the ${r.choice(['counter', 'table', 'delivery window', 'plate'])}.`,
  (r) => `${r.choice(people)} holds a ${r.choice(adjectives)} ${r.choice(things)} in one hand.`,
  (r) =>
    `${r.choice(['First', 'Then', 'After that', 'Finally'])}, ${r.choice(people).toLowerCase()} ${r.choice(verbs)} the ${r.choice([...things, ...foods])}.`,
];

/** `count` descriptive sentences, seeded. */
export function descriptiveText(rng: Rng, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(rng.choice(templates)(rng));
  return out;
}
