import type { FoodKind } from './tasks.js';

/** A food item. It is chopped after three chops; a wrong delivery sends it back unchopped. */
export interface Food {
  readonly type: 'food';
  readonly kind: FoodKind;
  /** Cell code written on the grid when the food lies alone on a counter. */
  readonly code: number;
  x: number;
  y: number;
  readonly initX: number;
  readonly initY: number;
  chops: number;
  chopped: boolean;
}

/** The plate ("bowl" in the text). It carries a list of foods, or `null` when empty. */
export interface Plate {
  readonly type: 'plate';
  x: number;
  y: number;
  readonly initX: number;
  readonly initY: number;
  contents: Food[] | null;
}

/** Anything the agent, a knife or the delivery square can hold. */
export type Movable = Food | Plate;

/** A fixed station (knife or delivery) that holds at most one item. */
export interface Station {
  readonly x: number;
  readonly y: number;
  holding: Movable | null;
}

/** The agent: a position and at most one held item. */
export interface Agent {
  x: number;
  y: number;
  holding: Movable | null;
}

/** Moves an item; a plate carries its contents along. */
export function moveItem(item: Movable, x: number, y: number): void {
  item.x = x;
  item.y = y;
  if (item.type === 'plate' && item.contents) {
    for (const f of item.contents) {
      f.x = x;
      f.y = y;
    }
  }
}

/** Adds a food to a plate; every food in the plate moves to the plate's cell. */
export function addToPlate(plate: Plate, food: Food): void {
  if (plate.contents && plate.contents.length > 0) plate.contents.push(food);
  else plate.contents = [food];
  for (const f of plate.contents) {
    f.x = plate.x;
    f.y = plate.y;
  }
}

/** The dish name of a plate's contents: foods in lettuce, onion, tomato order, then " salad". */
export function dishName(contents: readonly Food[]): string {
  const parts: string[] = [];
  for (const kind of ['lettuce', 'onion', 'tomato'] as const) {
    if (contents.some((f) => f.kind === kind)) parts.push(kind);
  }
  return `${parts.join('-')} salad`;
}
