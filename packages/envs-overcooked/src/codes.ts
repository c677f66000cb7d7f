/**
 * Cell codes of the kitchen grid and the primitive moves.
 *
 * Cells hold one code each. Items on a counter replace the counter code with their own; knives
 * and the delivery square keep their code whatever they hold.
 */
export const CELL = {
  floor: 0,
  counter: 1,
  agent: 2,
  tomato: 3,
  lettuce: 4,
  plate: 5,
  knife: 6,
  delivery: 7,
  onion: 8,
} as const;

/** Numeric cell code (see {@link CELL}). */
export type CellCode = (typeof CELL)[keyof typeof CELL];

/** Primitive moves: 0 right (y+1), 1 down (x+1), 2 left (y-1), 3 up (x-1), 4 stay. */
export const MOVE = { right: 0, down: 1, left: 2, up: 3, stay: 4 } as const;

/** Row offset of primitive move `m` (m < 4). */
export const MOVE_DX: readonly number[] = [0, 1, 0, -1];
/** Column offset of primitive move `m` (m < 4). */
export const MOVE_DY: readonly number[] = [1, 0, -1, 0];

/** Grid side length (map A is 7 x 7). */
export const GRID = 7;
/** Half-width of the agent's square view (a 5 x 5 window). */
export const VIEW_RADIUS = 2;
/** Chops needed before a food counts as chopped. */
export const CHOPS_NEEDED = 3;

/** Index of cell (x, y) in a flat row-major grid. */
export function cellIndex(x: number, y: number): number {
  return x * GRID + y;
}
