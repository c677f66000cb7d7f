import { CHOPS_NEEDED } from './codes.js';
import type { FoodKind } from './tasks.js';
import type { World } from './world.js';

/** One movable item as the agent sees it at the end of a macro-action. */
export interface SeenItem {
  /** `bowl` is the plate. */
  readonly name: FoodKind | 'bowl';
  /** Whether it lies inside the 5 x 5 view (otherwise x = y = 0 and it counts as unseen). */
  readonly visible: boolean;
  readonly x: number;
  readonly y: number;
  /** Food only: chopped (three chops) and visible. */
  readonly chopped: boolean;
  /** Whether it is visible on its start cell. */
  readonly atStart: boolean;
}

/** What the text and the labels are built from. */
export interface MacroView {
  /** Foods in task order, then the bowl. */
  readonly items: readonly SeenItem[];
  readonly agentX: number;
  readonly agentY: number;
  /** Indices into `items` of what the agent holds (foods first, the bowl last). */
  readonly held: readonly number[];
  /** Per cutting board, indices into `items` of what lies on it. */
  readonly boards: readonly (readonly number[])[];
}

/**
 * The macro observation: true positions and chop counts of items inside the view, zeros for
 * items outside it. Items are grouped by the cell they share with the agent or a board.
 */
export function macroView(world: World): MacroView {
  const a = world.agent;
  const items: SeenItem[] = [];
  const movables = [...world.foods, world.plate];
  for (const item of movables) {
    const visible = world.inView(item.x, item.y);
    const x = visible ? item.x : 0;
    const y = visible ? item.y : 0;
    items.push({
      name: item.type === 'plate' ? 'bowl' : item.kind,
      visible,
      x,
      y,
      chopped: visible && item.type === 'food' && item.chops === CHOPS_NEEDED,
      atStart: visible && x === item.initX && y === item.initY,
    });
  }
  const held: number[] = [];
  const boards: number[][] = world.knives.map(() => []);
  items.forEach((it, i) => {
    if (!it.visible) return;
    if (it.x === a.x && it.y === a.y) held.push(i);
    world.knives.forEach((k, b) => {
      if (it.x === k.x && it.y === k.y) boards[b]?.push(i);
    });
  });
  return { items, agentX: a.x, agentY: a.y, held, boards };
}
