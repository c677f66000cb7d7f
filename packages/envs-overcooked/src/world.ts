import { CELL, CHOPS_NEEDED, cellIndex, GRID, MOVE_DX, MOVE_DY, VIEW_RADIUS } from './codes.js';
import {
  type Agent,
  addToPlate,
  dishName,
  type Food,
  type Movable,
  moveItem,
  type Plate,
  type Station,
} from './items.js';
import { type OvercookedRewards, PRIMITIVE_DISCOUNT } from './rewards.js';
import { FOOD_CODE, type OvercookedTask } from './tasks.js';

/** Opt-in fixes of dynamics quirks (all off by default, which reproduces the original). */
export interface OvercookedFixes {
  /** Pay the subtask reward only the first time each food is chopped in an episode. */
  subtaskRewardOnce?: boolean;
  /** End a macro-action as soon as the primitive step limit is reached. */
  strictStepLimit?: boolean;
}

/**
 * The true state of the kitchen plus the agent's beliefs, with the primitive dynamics.
 *
 * Beliefs: every movable item (foods, then the plate) has a believed cell. An item inside the
 * 5 x 5 view is believed where it is; otherwise the old belief stays, unless that old belief lies
 * inside the view, in which case the item is believed back at its start cell.
 */
export class World {
  readonly cells = new Int8Array(GRID * GRID);
  readonly foods: Food[];
  readonly plate: Plate;
  readonly knives: Station[];
  readonly delivery: Station;
  readonly agent: Agent;
  /** Believed cells of foods (task order) then the plate. */
  readonly beliefX: Int8Array;
  readonly beliefY: Int8Array;
  /** Believed chop fraction of each food (kept for fidelity; nothing reads it). */
  readonly beliefChop: Float64Array;
  /** Primitive steps taken this episode. */
  envStep = 0;
  /** Σ 0.99^k · r_k over all primitive steps of the episode. */
  totalReturn = 0;
  private discount = 1;
  /** Whether the right dish has been delivered. */
  success = false;
  /** Foods already rewarded (used only by the `subtaskRewardOnce` fix). */
  private readonly rewarded = new Set<Food>();

  constructor(
    readonly task: OvercookedTask,
    readonly rewards: Readonly<OvercookedRewards>,
    readonly fixes: Readonly<OvercookedFixes> = {},
  ) {
    this.foods = task.foods.map((f) => ({
      type: 'food' as const,
      kind: f.kind,
      code: FOOD_CODE[f.kind],
      x: f.x,
      y: f.y,
      initX: f.x,
      initY: f.y,
      chops: 0,
      chopped: false,
    }));
    const [px, py] = task.plate;
    this.plate = { type: 'plate', x: px, y: py, initX: px, initY: py, contents: null };
    this.knives = task.knives.map(([x, y]) => ({ x, y, holding: null }));
    this.delivery = { x: task.delivery[0], y: task.delivery[1], holding: null };
    this.agent = { x: task.agent[0], y: task.agent[1], holding: null };
    const n = this.foods.length + 1;
    this.beliefX = new Int8Array(n);
    this.beliefY = new Int8Array(n);
    this.beliefChop = new Float64Array(this.foods.length);
    this.reset();
  }

  /** Puts everything back at its start cell and clears the episode counters. */
  reset(): void {
    const { cells, task } = this;
    for (let x = 0; x < GRID; x++) {
      for (let y = 0; y < GRID; y++) {
        const border = x === 0 || y === 0 || x === GRID - 1 || y === GRID - 1;
        cells[cellIndex(x, y)] = border ? CELL.counter : CELL.floor;
      }
    }
    for (const f of this.foods) {
      f.x = f.initX;
      f.y = f.initY;
      f.chops = 0;
      f.chopped = false;
      cells[cellIndex(f.x, f.y)] = f.code;
    }
    const p = this.plate;
    p.x = p.initX;
    p.y = p.initY;
    p.contents = null;
    cells[cellIndex(p.x, p.y)] = CELL.plate;
    for (const k of this.knives) {
      k.holding = null;
      cells[cellIndex(k.x, k.y)] = CELL.knife;
    }
    this.delivery.holding = null;
    cells[cellIndex(this.delivery.x, this.delivery.y)] = CELL.delivery;
    this.agent.x = task.agent[0];
    this.agent.y = task.agent[1];
    this.agent.holding = null;
    cells[cellIndex(this.agent.x, this.agent.y)] = CELL.agent;
    this.envStep = 0;
    this.totalReturn = 0;
    this.discount = 1;
    this.success = false;
    this.rewarded.clear();
    // The initial belief is the true start layout, then the first observation refines it.
    this.foods.forEach((f, i) => {
      this.beliefX[i] = f.x;
      this.beliefY[i] = f.y;
      this.beliefChop[i] = 0;
    });
    this.beliefX[this.foods.length] = p.x;
    this.beliefY[this.foods.length] = p.y;
    this.updateBeliefs();
  }

  /** Whether cell (x, y) lies in the agent's 5 x 5 view. */
  inView(x: number, y: number): boolean {
    const a = this.agent;
    return (
      x >= a.x - VIEW_RADIUS &&
      x <= a.x + VIEW_RADIUS &&
      y >= a.y - VIEW_RADIUS &&
      y <= a.y + VIEW_RADIUS
    );
  }

  /** Refreshes the beliefs from the current view (run after every primitive step). */
  updateBeliefs(): void {
    const n = this.foods.length;
    for (let i = 0; i <= n; i++) {
      const item: Movable = i < n ? (this.foods[i] as Food) : this.plate;
      if (this.inView(item.x, item.y)) {
        this.beliefX[i] = item.x;
        this.beliefY[i] = item.y;
        if (item.type === 'food') this.beliefChop[i] = item.chops / CHOPS_NEEDED;
      } else {
        if (this.inView(this.beliefX[i] as number, this.beliefY[i] as number)) {
          this.beliefX[i] = item.initX;
          this.beliefY[i] = item.initY;
        }
        // Out of view, the believed chop fraction is divided by 3 again every step.
        if (item.type === 'food')
          this.beliefChop[i] = (this.beliefChop[i] as number) / CHOPS_NEEDED;
      }
    }
  }

  /**
   * Whether the believed grid has an item on a floor cell other than the agent's (navigation
   * treats such cells as walls). Never true in map A, but checked so the A* cache stays exact.
   */
  beliefBlocksFloor(): boolean {
    const n = this.foods.length;
    const a = this.agent;
    for (let i = 0; i <= n; i++) {
      const x = this.beliefX[i] as number;
      const y = this.beliefY[i] as number;
      if (x === a.x && y === a.y) continue;
      if (x > 0 && y > 0 && x < GRID - 1 && y < GRID - 1) return true;
    }
    return false;
  }

  /** Whether the believed grid lets the agent walk on (x, y): free floor or its own cell. */
  believedWalkable(x: number, y: number): boolean {
    if (x <= 0 || y <= 0 || x >= GRID - 1 || y >= GRID - 1) return false;
    const a = this.agent;
    if (x === a.x && y === a.y) return true;
    const n = this.foods.length;
    for (let i = 0; i <= n; i++) {
      if (this.beliefX[i] === x && this.beliefY[i] === y) return false;
    }
    return true;
  }

  /** The knife at (x, y), if any. */
  knifeAt(x: number, y: number): Station | undefined {
    for (const k of this.knives) if (k.x === x && k.y === y) return k;
    return undefined;
  }

  private foodAt(x: number, y: number, code: number): Food | undefined {
    for (const f of this.foods) if (f.code === code && f.x === x && f.y === y) return f;
    return undefined;
  }

  private moveAgent(x: number, y: number): void {
    const a = this.agent;
    a.x = x;
    a.y = y;
    if (a.holding) moveItem(a.holding, x, y);
  }

  private pickUp(item: Movable): void {
    this.agent.holding = item;
    moveItem(item, this.agent.x, this.agent.y);
  }

  /** Drops the held item at (x, y) and returns it. */
  private putDown(x: number, y: number): Movable {
    const item = this.agent.holding as Movable;
    moveItem(item, x, y);
    this.agent.holding = null;
    return item;
  }

  private chop(food: Food): number {
    if (food.chopped) return 0;
    food.chops += 1;
    if (food.chops < CHOPS_NEEDED) return 0;
    food.chopped = true;
    if (!this.task.recipe.includes(food.kind)) return 0;
    if (this.fixes.subtaskRewardOnce) {
      if (this.rewarded.has(food)) return 0;
      this.rewarded.add(food);
    }
    return this.rewards.subtask;
  }

  /** Sends an item back to its start cell (food unchopped) and writes it on the grid there. */
  private sendBack(item: Movable): void {
    if (item.type === 'plate') {
      item.x = item.initX;
      item.y = item.initY;
      this.cells[cellIndex(item.x, item.y)] = CELL.plate;
    } else {
      item.x = item.initX;
      item.y = item.initY;
      item.chopped = false;
      item.chops = 0;
      this.cells[cellIndex(item.x, item.y)] = item.code;
    }
  }

  /** Interaction of an empty-handed agent with the cell (x, y) holding code `code`. */
  private interactEmpty(x: number, y: number, code: number): number {
    const { cells } = this;
    if (code === CELL.plate) {
      if (this.plate.x === x && this.plate.y === y) {
        this.pickUp(this.plate);
        cells[cellIndex(x, y)] = CELL.counter;
      }
      return 0;
    }
    if (code === CELL.tomato || code === CELL.lettuce || code === CELL.onion) {
      const food = this.foodAt(x, y, code);
      if (food) {
        this.pickUp(food);
        cells[cellIndex(x, y)] = CELL.counter;
      }
      return 0;
    }
    if (code === CELL.knife) {
      const knife = this.knifeAt(x, y) as Station;
      const held = knife.holding;
      if (held === null) return 0;
      if (held.type === 'plate' || held.chopped) {
        knife.holding = null;
        this.pickUp(held);
        return 0;
      }
      return this.chop(held);
    }
    return 0;
  }

  /** Interaction of an agent holding something with the cell (x, y) holding code `code`. */
  private interactHolding(x: number, y: number, code: number): number {
    const { cells, agent } = this;
    const held = agent.holding as Movable;
    if (code === CELL.counter) {
      cells[cellIndex(x, y)] = held.type === 'plate' ? CELL.plate : held.code;
      this.putDown(x, y);
      return 0;
    }
    if (code === CELL.plate) {
      if (held.type === 'food' && held.chopped && this.plate.x === x && this.plate.y === y) {
        this.putDown(x, y);
        addToPlate(this.plate, held);
      }
      return 0;
    }
    if (code === CELL.knife) {
      const knife = this.knifeAt(x, y) as Station;
      const onKnife = knife.holding;
      if (onKnife === null) {
        knife.holding = this.putDown(x, y);
      } else if (onKnife.type === 'food' && held.type === 'plate') {
        if (onKnife.chopped) {
          knife.holding = null;
          addToPlate(held, onKnife);
        }
      } else if (onKnife.type === 'plate' && held.type === 'food') {
        if (held.chopped) {
          knife.holding = null;
          this.pickUp(onKnife);
          addToPlate(onKnife, held);
        }
      }
      return 0;
    }
    if (code === CELL.delivery) return this.deliver(x, y, held);
    if (code === CELL.tomato || code === CELL.lettuce || code === CELL.onion) {
      const food = this.foodAt(x, y, code);
      if (food?.chopped && held.type === 'plate') {
        addToPlate(held, food);
        cells[cellIndex(x, y)] = CELL.counter;
      }
    }
    return 0;
  }

  private deliver(x: number, y: number, held: Movable): number {
    if (held.type === 'plate' && held.contents && held.contents.length > 0) {
      if (dishName(held.contents) === this.task.recipe) {
        this.putDown(x, y);
        this.delivery.holding = held;
        this.success = true;
        return this.rewards.correctDelivery;
      }
      this.putDown(x, y);
      const foods = held.contents;
      held.contents = null;
      this.sendBack(held);
      for (const f of foods) this.sendBack(f);
      return this.rewards.wrongDelivery;
    }
    this.putDown(x, y);
    this.sendBack(held);
    return this.rewards.wrongDelivery;
  }

  /**
   * One primitive step: 0 right, 1 down, 2 left, 3 up, 4 stay. Moving into floor moves the
   * agent; moving into anything else interacts with it. Returns the step's reward.
   */
  primitiveStep(move: number): number {
    let reward = this.rewards.step;
    if (move < 4) {
      const a = this.agent;
      const tx = a.x + (MOVE_DX[move] as number);
      const ty = a.y + (MOVE_DY[move] as number);
      const code = this.cells[cellIndex(tx, ty)] as number;
      if (code === CELL.floor) {
        this.cells[cellIndex(a.x, a.y)] = CELL.floor;
        this.moveAgent(tx, ty);
        this.cells[cellIndex(tx, ty)] = CELL.agent;
      } else if (code !== CELL.agent) {
        reward += a.holding ? this.interactHolding(tx, ty, code) : this.interactEmpty(tx, ty, code);
      }
    }
    this.totalReturn += this.discount * reward;
    this.envStep += 1;
    this.discount *= PRIMITIVE_DISCOUNT;
    this.updateBeliefs();
    return reward;
  }
}
