import { FoodPreparationText } from './food-preparation-text.js';
import { mask, type VirtualHomeModel } from './model.js';
import { BATHROOM, BEDROOM, type FoodNouns, foodLabels, KITCHEN, LIVING_ROOM } from './tasks.js';

/** Where the item is. */
const ON_TABLE = 0;
const IN_APPLIANCE = 1;
const HELD = 2;

/** Action indices (envs.md §1.4, v1). */
export const FOOD_ACTIONS = {
  walkItem: 4,
  walkAppliance: 5,
  grab: 6,
  putIn: 7,
  open: 8,
  close: 9,
} as const;

const A = FOOD_ACTIONS;
const SETS = {
  invisible: mask(0, 2, 3),
  holdingNearAppliance: mask(0, 2, 3, 4, 7, 8, 9),
  holdingFar: mask(0, 2, 3, 4, 5),
  nearItem: mask(0, 2, 3, 5, 6),
  nearAppliance: mask(0, 2, 3, 4, 8, 9),
  nearNothing: mask(0, 2, 3, 4, 5),
  nearBothOpen: mask(0, 2, 3, 8, 9),
  nearBothClosed: mask(0, 2, 3, 9),
  bathroom: mask(0, 1, 3),
  bedroom: mask(0, 1, 2),
  livingRoom: mask(1, 2, 3),
};

/** Options of the food-preparation dynamics. */
export interface FoodPreparationRules {
  /** Fix the teleport quirk: walking to the held item keeps the agent where it is. */
  fixTeleport?: boolean;
}

/**
 * Food preparation (VirtualHome-v1) and its noun variants: put the item in the appliance and
 * close it. State per envs.md §1.3, including the held-item room tag.
 */
export class FoodPreparationModel implements VirtualHomeModel {
  readonly labels: readonly string[];
  private readonly text: FoodPreparationText;
  private room = KITCHEN;
  private closeItem = false;
  private closeAppliance = false;
  private where = ON_TABLE;
  /** Room tag of the held item: the room the agent left on its last successful walk. */
  private tag = KITCHEN;
  private open = false;

  constructor(
    nouns: FoodNouns,
    private readonly rules: FoodPreparationRules = {},
  ) {
    this.labels = foodLabels(nouns);
    this.text = new FoodPreparationText(nouns);
  }

  reset(): void {
    this.room = KITCHEN;
    this.closeItem = false;
    this.closeAppliance = false;
    this.where = ON_TABLE;
    this.tag = KITCHEN;
    this.open = false;
  }

  private get held(): boolean {
    return this.where === HELD;
  }

  /** Held, or in the kitchen and not shut inside the closed appliance. */
  private seeItem(): boolean {
    return (
      this.where === HELD || (this.room === KITCHEN && !(this.where === IN_APPLIANCE && !this.open))
    );
  }

  validMask(): number {
    switch (this.room) {
      case BATHROOM:
        return SETS.bathroom;
      case BEDROOM:
        return SETS.bedroom;
      case LIVING_ROOM:
        return SETS.livingRoom;
    }
    if (!this.seeItem()) return SETS.invisible;
    const nearItem = this.closeItem;
    const nearAppliance = this.closeAppliance;
    if (this.held) return nearAppliance ? SETS.holdingNearAppliance : SETS.holdingFar;
    if (nearItem && nearAppliance) return this.open ? SETS.nearBothOpen : SETS.nearBothClosed;
    if (nearItem) return SETS.nearItem;
    if (nearAppliance) return SETS.nearAppliance;
    return SETS.nearNothing;
  }

  pack(): number {
    return (
      this.room |
      (this.tag << 2) |
      (this.where << 4) |
      (+this.closeItem << 6) |
      (+this.closeAppliance << 7) |
      (+this.open << 8)
    );
  }

  unpack(state: number): void {
    this.room = state & 3;
    this.tag = (state >> 2) & 3;
    this.where = (state >> 4) & 3;
    this.closeItem = ((state >> 6) & 1) === 1;
    this.closeAppliance = ((state >> 7) & 1) === 1;
    this.open = ((state >> 8) & 1) === 1;
  }

  private canGrab(): boolean {
    return this.closeItem && this.seeItem() && !this.held;
  }

  apply(a: number): boolean {
    if (a <= 3) {
      this.walk(a, this.held, false);
      return true;
    }
    switch (a) {
      case A.walkItem: {
        if (!this.seeItem()) return false;
        const target = this.held ? (this.rules.fixTeleport ? this.room : this.tag) : KITCHEN;
        this.walk(target, true, this.where === IN_APPLIANCE);
        return true;
      }
      case A.walkAppliance:
        if (this.room !== KITCHEN) return false;
        this.walk(KITCHEN, this.held || this.where === IN_APPLIANCE, true);
        return true;
      case A.grab:
        if (!this.canGrab()) return false;
        this.where = HELD;
        this.tag = this.room;
        return true;
      case A.putIn:
        if (!(this.held && this.closeAppliance && this.open)) return false;
        this.where = IN_APPLIANCE;
        return true;
      case A.open:
        // a free hand is needed; with two hands and one item there always is one
        if (!this.closeAppliance || this.open) return false;
        this.open = true;
        return true;
      case A.close:
        if (!this.closeAppliance || !this.open) return false;
        this.open = false;
        return true;
    }
    return false;
  }

  /** A successful walk: new room and close set; the held item's tag becomes the room left. */
  private walk(room: number, closeItem: boolean, closeAppliance: boolean): void {
    if (this.held) this.tag = this.rules.fixTeleport ? room : this.room;
    this.room = room;
    this.closeItem = closeItem;
    this.closeAppliance = closeAppliance;
  }

  success(): boolean {
    return this.room === KITCHEN && !this.seeItem();
  }

  observation(): string {
    const see = this.seeItem();
    return this.text.render({
      room: this.room,
      seeItem: see,
      held: this.held,
      inAppliance: this.where === IN_APPLIANCE,
      nearItem: see && this.closeItem,
      nearAppliance: this.room === KITCHEN && this.closeAppliance,
      open: this.open,
    });
  }
}
