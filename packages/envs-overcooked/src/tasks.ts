import { CELL } from './codes.js';

/** Food kinds, in the order the original environment lists them. */
export type FoodKind = 'tomato' | 'lettuce' | 'onion';

/** What a macro-action does; see `macro.ts` for the stop rules. */
export type MacroKind =
  | { readonly type: 'food'; readonly food: FoodKind }
  | { readonly type: 'plate' }
  | { readonly type: 'knife'; readonly knife: number }
  | { readonly type: 'deliver' }
  | { readonly type: 'chop' };

/** Static description of one Overcooked task (map A, one agent). */
export interface OvercookedTask {
  /** Registry id, e.g. `overcooked/tomato-salad`. */
  readonly id: string;
  /** Name of the original environment version. */
  readonly version: 'v3' | 'v4';
  /** Recipe string compared with the delivered dish, e.g. `lettuce-tomato salad`. */
  readonly recipe: string;
  /** Foods present in the kitchen, in item order, with their start cells. */
  readonly foods: readonly { readonly kind: FoodKind; readonly x: number; readonly y: number }[];
  /** Start cell of the plate (the "bowl" of the text). */
  readonly plate: readonly [number, number];
  /** Cutting boards (knives), in item order. */
  readonly knives: readonly (readonly [number, number])[];
  /** The delivery square. */
  readonly delivery: readonly [number, number];
  /** Agent start cell. */
  readonly agent: readonly [number, number];
  /** Macro-actions in environment index order. */
  readonly macros: readonly MacroKind[];
  /** Foods the goal bowl must hold (for the goal sentence). */
  readonly goalFoods: readonly FoodKind[];
}

/** Cell code of each food kind. */
export const FOOD_CODE: Readonly<Record<FoodKind, number>> = {
  tomato: CELL.tomato,
  lettuce: CELL.lettuce,
  onion: CELL.onion,
};

const V4: OvercookedTask = {
  id: 'overcooked/tomato-salad',
  version: 'v4',
  recipe: 'tomato salad',
  foods: [{ kind: 'tomato', x: 0, y: 5 }],
  plate: [6, 5],
  knives: [[1, 0]],
  delivery: [3, 0],
  agent: [1, 4],
  macros: [
    { type: 'food', food: 'tomato' },
    { type: 'plate' },
    { type: 'knife', knife: 0 },
    { type: 'deliver' },
    { type: 'chop' },
  ],
  goalFoods: ['tomato'],
};

const V3: OvercookedTask = {
  id: 'overcooked/tomato-lettuce-salad',
  version: 'v3',
  recipe: 'lettuce-tomato salad',
  foods: [
    { kind: 'tomato', x: 0, y: 5 },
    { kind: 'lettuce', x: 1, y: 6 },
    { kind: 'onion', x: 2, y: 6 },
  ],
  plate: [6, 5],
  knives: [
    [1, 0],
    [2, 0],
  ],
  delivery: [3, 0],
  agent: [1, 4],
  macros: [
    { type: 'food', food: 'tomato' },
    { type: 'food', food: 'lettuce' },
    { type: 'food', food: 'onion' },
    { type: 'plate' },
    { type: 'knife', knife: 0 },
    { type: 'knife', knife: 1 },
    { type: 'deliver' },
    { type: 'chop' },
  ],
  goalFoods: ['tomato', 'lettuce'],
};

/** Task names accepted by `createOvercookedEnv`. */
export type OvercookedTaskName = 'tomato-salad' | 'tomato-lettuce-salad';

/** The two tasks of the paper: tomato salad (v4) and tomato-lettuce salad (v3). */
export const OVERCOOKED_TASKS: Readonly<Record<OvercookedTaskName, OvercookedTask>> = {
  'tomato-salad': V4,
  'tomato-lettuce-salad': V3,
};
