import { CELL, cellIndex, MOVE, MOVE_DX, MOVE_DY } from './codes.js';
import type { Food } from './items.js';
import { astarFirstMove, OpenMapRouter } from './navigation.js';
import { PRIMITIVE_DISCOUNT } from './rewards.js';
import type { MacroKind } from './tasks.js';
import type { World } from './world.js';

/** Result of running one macro-action to its end. */
export interface MacroResult {
  /** Σ_k 0.99^k · r_k over the macro's primitive steps. */
  reward: number;
  /** Number of primitive steps taken. */
  primitiveSteps: number;
}

const ROUTER = new OpenMapRouter();

/**
 * Runs macro-actions as sequences of primitive steps with the stop rules of the original
 * environment. One controller belongs to one {@link World}.
 */
export class MacroController {
  private done = true;
  private chopTimes = 0;

  constructor(
    private readonly world: World,
    private readonly useCache = true,
  ) {}

  /** Clears the macro state at the start of an episode. */
  reset(): void {
    this.done = true;
    this.chopTimes = 0;
  }

  /**
   * Takes primitive steps until macro `index` (environment order) is done. With `stepLimit`
   * set, it also stops once the world has taken that many primitive steps.
   */
  run(index: number, stepLimit = Number.POSITIVE_INFINITY): MacroResult {
    const world = this.world;
    const macro = world.task.macros[index] as MacroKind;
    this.done = false;
    let reward = 0;
    let discount = 1;
    let steps = 0;
    while (true) {
      steps += 1;
      const move = this.lowLevelMove(macro);
      reward += discount * world.primitiveStep(move);
      this.checkDoneAfterStep(macro);
      discount *= PRIMITIVE_DISCOUNT;
      if (this.done || world.envStep >= stepLimit) break;
    }
    this.done = true;
    return { reward, primitiveSteps: steps };
  }

  /** Believed cell of the macro's target item. */
  private target(macro: MacroKind): [number, number] {
    const w = this.world;
    switch (macro.type) {
      case 'food': {
        const i = w.foods.findIndex((f) => f.kind === macro.food);
        return [w.beliefX[i] as number, w.beliefY[i] as number];
      }
      case 'plate': {
        const i = w.foods.length;
        return [w.beliefX[i] as number, w.beliefY[i] as number];
      }
      case 'knife': {
        const k = w.knives[macro.knife] as { x: number; y: number };
        return [k.x, k.y];
      }
      default:
        return [w.delivery.x, w.delivery.y];
    }
  }

  /** The real item a food or plate macro is after. */
  private realItem(macro: MacroKind): { x: number; y: number } | undefined {
    const w = this.world;
    if (macro.type === 'food') return w.foods.find((f) => f.kind === macro.food);
    if (macro.type === 'plate') return w.plate;
    return undefined;
  }

  private navigate(tx: number, ty: number): number {
    const w = this.world;
    const a = w.agent;
    if (this.useCache && !w.beliefBlocksFloor()) return ROUTER.firstMove(a.x, a.y, tx, ty);
    return astarFirstMove(
      a.x,
      a.y,
      tx,
      ty,
      (x, y) => w.believedWalkable(x, y),
      (x, y) => x === a.x && y === a.y,
    );
  }

  private chopMove(): number {
    const w = this.world;
    const a = w.agent;
    for (let d = 0; d < 4; d++) {
      const nx = a.x + (MOVE_DX[d] as number);
      const ny = a.y + (MOVE_DY[d] as number);
      if (w.cells[cellIndex(nx, ny)] !== CELL.knife) continue;
      const held = w.knifeAt(nx, ny)?.holding;
      if (held && held.type === 'food' && !held.chopped) {
        this.chopTimes += 1;
        if (this.chopTimes >= 3) {
          this.done = true;
          this.chopTimes = 0;
        }
        return d;
      }
    }
    this.done = true;
    return MOVE.stay;
  }

  /** The primitive move for the current state; may mark the macro done. */
  private lowLevelMove(macro: MacroKind): number {
    if (macro.type === 'chop') return this.chopMove();
    const w = this.world;
    const a = w.agent;
    const [tx, ty] = this.target(macro);
    const targetInView = w.inView(tx, ty);
    // A food believed where the plate is (inside it, or the plate is held): nothing to do.
    if (macro.type === 'food' && targetInView && w.plate.x === tx && w.plate.y === ty) {
      this.done = true;
      return MOVE.stay;
    }
    // The target is believed on the agent's own cell (it is held).
    if (tx === a.x && ty === a.y && targetInView) {
      this.done = true;
      return MOVE.stay;
    }
    let move = this.navigate(tx, ty);
    if (move === MOVE.stay) this.done = true;
    if (Math.abs(tx - a.x) + Math.abs(ty - a.y) !== 1) return move;

    // Adjacent to the target: the next move is the last one, unless a rule below says otherwise.
    this.done = true;
    const held = a.holding;
    if (macro.type === 'plate' && held && held.type === 'food') {
      if (held.chopped) this.done = false;
      else move = MOVE.stay;
    }
    if (macro.type === 'knife' && !held) move = MOVE.stay;
    if (macro.type === 'food') {
      const onKnife = w.knifeAt(tx, ty)?.holding;
      if (onKnife && onKnife.type === 'food' && !onKnife.chopped) move = MOVE.stay;
    }
    const real = this.realItem(macro);
    if (real && (real.x !== tx || real.y !== ty)) move = MOVE.stay;
    return move;
  }

  /** Stop rules checked after each primitive step of a macro that is still running. */
  private checkDoneAfterStep(macro: MacroKind): void {
    if (this.done) return;
    const w = this.world;
    const a = w.agent;
    if (macro.type === 'chop') return;
    const [tx, ty] = this.target(macro);
    const adjacent = Math.abs(tx - a.x) + Math.abs(ty - a.y) === 1;
    if (macro.type === 'knife') {
      if (!a.holding && adjacent) this.done = true;
    } else if (macro.type === 'food') {
      if (adjacent && w.knifeAt(tx, ty)) {
        const food = w.foods.find((f: Food) => f.kind === macro.food && f.x === tx && f.y === ty) as
          | Food
          | undefined;
        if (food && !food.chopped) this.done = true;
      }
    } else if (macro.type === 'deliver') {
      if (!a.holding && adjacent) this.done = true;
    }
    const real = this.realItem(macro);
    if (real && (real.x !== tx || real.y !== ty)) this.done = true;
  }
}
