/** The VirtualHome tasks: the two training tasks and the six unseen food-preparation variants. */
export const VIRTUALHOME_TASKS = [
  'food-preparation',
  'entertainment',
  'food-preparation/cheese',
  'food-preparation/hamburger',
  'food-preparation/apple-pie',
  'food-preparation/pizza',
  'food-preparation/washing-plate',
  'food-preparation/laundry',
] as const;

/**
 * The unseen variants of food-preparation (the paper's Table 1: only the nouns change), which an
 * evaluation of a policy trained on food-preparation also plays.
 */
export const UNSEEN_VARIANTS = VIRTUALHOME_TASKS.filter((t) => t.startsWith('food-preparation/'));

/** One of {@link VIRTUALHOME_TASKS}. */
export type VirtualHomeTask = (typeof VIRTUALHOME_TASKS)[number];

/** The nouns of a food-preparation task (variants only change these). */
export interface FoodNouns {
  /** The item to put in the appliance, e.g. `pancake`. */
  item: string;
  /** The appliance, e.g. `microwave`. */
  appliance: string;
  /** Whether `item` is a plural noun ("the dishes are"). */
  plural: boolean;
}

const FOOD_NOUNS: Record<Exclude<VirtualHomeTask, 'entertainment'>, FoodNouns> = {
  'food-preparation': { item: 'pancake', appliance: 'microwave', plural: false },
  'food-preparation/cheese': { item: 'cheese', appliance: 'microwave', plural: false },
  'food-preparation/hamburger': { item: 'hamburger', appliance: 'microwave', plural: false },
  'food-preparation/apple-pie': { item: 'apple pie', appliance: 'microwave', plural: false },
  'food-preparation/pizza': { item: 'pizza', appliance: 'microwave', plural: false },
  'food-preparation/washing-plate': { item: 'dishes', appliance: 'dishwasher', plural: true },
  'food-preparation/laundry': { item: 'clothes', appliance: 'washing machine', plural: true },
};

/** Whether `task` names a VirtualHome task. */
export function isVirtualHomeTask(task: unknown): task is VirtualHomeTask {
  return typeof task === 'string' && (VIRTUALHOME_TASKS as readonly string[]).includes(task);
}

/** The nouns of a food-preparation task or variant. */
export function foodNouns(task: Exclude<VirtualHomeTask, 'entertainment'>): FoodNouns {
  return FOOD_NOUNS[task];
}

/** The four rooms, in the order of the first four actions. */
export const ROOM_NAMES = ['living room', 'kitchen', 'bathroom', 'bedroom'] as const;

/** Room indices (equal to the index of the action that walks there). */
export const LIVING_ROOM = 0;
export const KITCHEN = 1;
export const BATHROOM = 2;
export const BEDROOM = 3;

/** All ten food-preparation labels, by action index. */
export function foodLabels(nouns: FoodNouns): readonly string[] {
  const { item, appliance } = nouns;
  return Object.freeze([
    ...ROOM_NAMES.map((r) => `walk to the ${r}`),
    `walk to the ${item}`,
    `walk to the ${appliance}`,
    `grab the ${item}`,
    `put the ${item} in the ${appliance}`,
    `open the ${appliance}`,
    `close the ${appliance}`,
  ]);
}

/** All seventeen entertainment labels, by action index. */
export const ENTERTAINMENT_LABELS: readonly string[] = Object.freeze([
  ...ROOM_NAMES.map((r) => `walk to the ${r}`),
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
