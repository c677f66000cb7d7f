import { GRID } from './codes.js';
import type { Movable } from './items.js';
import type { FoodKind } from './tasks.js';
import type { World } from './world.js';

/** A held or placed item: a food (with its chop state) or the bowl with its foods. */
export type ItemSnapshot =
  | {
      readonly type: 'food';
      readonly kind: FoodKind;
      readonly chopped: boolean;
      readonly chops: number;
    }
  | { readonly type: 'bowl'; readonly contents: readonly FoodKind[] };

/** A plain-data copy of the true kitchen state (for rendering, logging and tests). */
export interface OvercookedSnapshot {
  readonly taskId: string;
  /** Cell codes by row (x) then column (y); see `CELL`. */
  readonly cells: readonly (readonly number[])[];
  readonly agent: { readonly x: number; readonly y: number; readonly holding: ItemSnapshot | null };
  readonly foods: readonly {
    readonly kind: FoodKind;
    readonly x: number;
    readonly y: number;
    readonly chops: number;
    readonly chopped: boolean;
  }[];
  readonly bowl: { readonly x: number; readonly y: number; readonly contents: readonly FoodKind[] };
  readonly boards: readonly {
    readonly x: number;
    readonly y: number;
    readonly holding: ItemSnapshot | null;
  }[];
  readonly delivery: {
    readonly x: number;
    readonly y: number;
    readonly holding: ItemSnapshot | null;
  };
  /** Primitive steps taken in the episode. */
  readonly primitiveSteps: number;
}

function itemSnapshot(item: Movable | null): ItemSnapshot | null {
  if (item === null) return null;
  if (item.type === 'plate') {
    return { type: 'bowl', contents: (item.contents ?? []).map((f) => f.kind) };
  }
  return { type: 'food', kind: item.kind, chopped: item.chopped, chops: item.chops };
}

/** Copies the true state of a world. */
export function snapshotWorld(world: World): OvercookedSnapshot {
  const cells: number[][] = [];
  for (let x = 0; x < GRID; x++) {
    const row: number[] = [];
    for (let y = 0; y < GRID; y++) row.push(world.cells[x * GRID + y] as number);
    cells.push(row);
  }
  return {
    taskId: world.task.id,
    cells,
    agent: { x: world.agent.x, y: world.agent.y, holding: itemSnapshot(world.agent.holding) },
    foods: world.foods.map((f) => ({
      kind: f.kind,
      x: f.x,
      y: f.y,
      chops: f.chops,
      chopped: f.chopped,
    })),
    bowl: {
      x: world.plate.x,
      y: world.plate.y,
      contents: (world.plate.contents ?? []).map((f) => f.kind),
    },
    boards: world.knives.map((k) => ({ x: k.x, y: k.y, holding: itemSnapshot(k.holding) })),
    delivery: {
      x: world.delivery.x,
      y: world.delivery.y,
      holding: itemSnapshot(world.delivery.holding),
    },
    primitiveSteps: world.envStep,
  };
}
