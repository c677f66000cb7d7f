import { GRID, MOVE } from './codes.js';

/** Neighbour expansion order of the search: right, left, down, up (as moves 0, 2, 1, 3). */
const EXPAND_DX = [0, 0, 1, -1] as const;
const EXPAND_DY = [1, -1, 0, 0] as const;
const EXPAND_MOVE = [MOVE.right, MOVE.left, MOVE.down, MOVE.up] as const;

interface SearchNode {
  x: number;
  y: number;
  g: number;
  f: number;
  /** First move of the path that reached this node; -1 at the start. */
  first: number;
  /** 1 when the node is a cell the believed grid marks as the agent. */
  pass: number;
}

/**
 * Heap order of the original search: by f, ties by `pass`, and on a full tie the comparison
 * answers "less" both ways. Reproducing that non-strict comparison inside a binary heap that
 * sifts exactly like Python's `heapq` keeps the chosen first move identical to the original.
 */
function less(a: SearchNode, b: SearchNode): boolean {
  if (a.f !== b.f) return a.f <= b.f;
  return a.pass <= b.pass;
}

function siftDown(heap: SearchNode[], start: number, pos: number): void {
  const item = heap[pos] as SearchNode;
  let p = pos;
  while (p > start) {
    const parentPos = (p - 1) >> 1;
    const parent = heap[parentPos] as SearchNode;
    if (less(item, parent)) {
      heap[p] = parent;
      p = parentPos;
      continue;
    }
    break;
  }
  heap[p] = item;
}

function siftUp(heap: SearchNode[], pos: number): void {
  const end = heap.length;
  const start = pos;
  const item = heap[pos] as SearchNode;
  let p = pos;
  let child = 2 * p + 1;
  while (child < end) {
    const right = child + 1;
    if (right < end && !less(heap[child] as SearchNode, heap[right] as SearchNode)) child = right;
    heap[p] = heap[child] as SearchNode;
    p = child;
    child = 2 * p + 1;
  }
  heap[p] = item;
  siftDown(heap, start, p);
}

function push(heap: SearchNode[], node: SearchNode): void {
  heap.push(node);
  siftDown(heap, 0, heap.length - 1);
}

function pop(heap: SearchNode[]): SearchNode {
  const last = heap.pop() as SearchNode;
  if (heap.length === 0) return last;
  const top = heap[0] as SearchNode;
  heap[0] = last;
  siftUp(heap, 0);
  return top;
}

/**
 * A* over the believed grid from (sx, sy) towards the target cell (tx, ty); returns the first
 * primitive move of the path, or `stay` when no path exists. Only walkable cells are entered;
 * the search stops as soon as the target is generated as a neighbour, so the target itself may
 * be a counter. `walkable(x, y)` answers for cells of the believed grid, `isAgent(x, y)` marks
 * the agent's own cell.
 */
export function astarFirstMove(
  sx: number,
  sy: number,
  tx: number,
  ty: number,
  walkable: (x: number, y: number) => boolean,
  isAgent: (x: number, y: number) => boolean,
): number {
  const visited = new Uint8Array(GRID * GRID);
  const heap: SearchNode[] = [];
  push(heap, { x: sx, y: sy, g: 0, f: Math.abs(tx - sx) + Math.abs(ty - sy), first: -1, pass: 0 });
  visited[sx * GRID + sy] = 1;
  while (heap.length > 0) {
    const node = pop(heap);
    for (let d = 0; d < 4; d++) {
      const nx = node.x + (EXPAND_DX[d] as number);
      const ny = node.y + (EXPAND_DY[d] as number);
      if (nx < 0 || ny < 0 || nx >= GRID || ny >= GRID) continue;
      if (visited[nx * GRID + ny]) continue;
      const first = node.first >= 0 ? node.first : (EXPAND_MOVE[d] as number);
      if (walkable(nx, ny)) {
        const g = node.g + 1;
        const pass = isAgent(nx, ny) ? 1 : 0;
        push(heap, { x: nx, y: ny, g, f: g + Math.abs(tx - nx) + Math.abs(ty - ny), first, pass });
        visited[nx * GRID + ny] = 1;
      }
      if (nx === tx && ny === ty) return first;
    }
  }
  return MOVE.stay;
}

/**
 * First moves on the open map (no believed item on the floor), cached per (agent cell, target
 * cell). The map's floor never changes, so each entry is computed once by {@link astarFirstMove}.
 */
export class OpenMapRouter {
  private readonly cache = new Int8Array(GRID * GRID * GRID * GRID).fill(-1);

  /** First move from (sx, sy) towards (tx, ty) on the open 5 x 5 floor. */
  firstMove(sx: number, sy: number, tx: number, ty: number): number {
    const key = (sx * GRID + sy) * GRID * GRID + tx * GRID + ty;
    const hit = this.cache[key] as number;
    if (hit >= 0) return hit;
    const move = astarFirstMove(sx, sy, tx, ty, isOpenFloor, (x, y) => x === sx && y === sy);
    this.cache[key] = move;
    return move;
  }
}

function isOpenFloor(x: number, y: number): boolean {
  return x > 0 && y > 0 && x < GRID - 1 && y < GRID - 1;
}
