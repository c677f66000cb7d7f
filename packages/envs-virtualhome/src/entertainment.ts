import { EntertainmentText, TextKey } from './entertainment-text.js';
import { mask, type VirtualHomeModel } from './model.js';
import { BEDROOM, ENTERTAINMENT_LABELS, KITCHEN, LIVING_ROOM } from './tasks.js';

/** Where a snack (chips or milk) is. */
const ON_COUNTER = 0;
const HELD = 1;
const ON_TABLE = 2;

/** Bits of the close set. */
const CHIPS = 1;
const MILK = 2;
const TABLE = 4;
const TV = 8;
const SOFA = 16;

/** Action indices (envs.md §1.4, v2). */
export const ENTERTAINMENT_ACTIONS = {
  walkChips: 4,
  walkMilk: 5,
  walkTable: 6,
  walkTv: 7,
  walkSofa: 8,
  grabChips: 9,
  grabMilk: 10,
  putChips: 11,
  putMilk: 12,
  tvOn: 13,
  tvOff: 14,
  sit: 15,
  standUp: 16,
} as const;

const A = ENTERTAINMENT_ACTIONS;
const S = {
  kitchenHoldBoth: mask(0, 2, 3),
  chipsHeldNearMilk: mask(0, 2, 3, 10),
  chipsHeldFar: mask(0, 2, 3, 5),
  milkHeldNearChips: mask(0, 2, 3, 9),
  milkHeldFar: mask(0, 2, 3, 4),
  nearBoth: mask(0, 2, 3, 9, 10),
  nearChips: mask(0, 2, 3, 5, 9),
  nearMilk: mask(0, 2, 3, 4, 10),
  nearNone: mask(0, 2, 3, 4, 5),
  kitchenOnly: mask(0, 2, 3),
  onlyChipsNear: mask(0, 2, 3, 9),
  onlyMilkNear: mask(0, 2, 3, 10),
  // the walk offered here targets the item that cannot be seen (deadlock quirk)
  onlyChipsFar: mask(0, 2, 3, 5),
  onlyMilkFar: mask(0, 2, 3, 4),
  livingNone: mask(1, 2, 3, 6, 7, 8),
  tableHoldBoth: mask(1, 2, 3, 7, 8, 11, 12),
  tableMilk: mask(1, 2, 3, 7, 8, 12),
  tableChips: mask(1, 2, 3, 7, 8, 11),
  tableBlocked: mask(1, 2, 3, 7, 8),
  tableEmpty: mask(1, 2, 3),
  tvOn: mask(1, 2, 3, 6, 8),
  tvOff: mask(1, 2, 3, 6, 8, 13, 14),
  seated: mask(1, 2, 3),
  seatedFixed: mask(1, 2, 3, 16),
  sofaTvOn: mask(1, 2, 3, 6, 7, 15, 16),
  sofaTvOff: mask(1, 2, 3, 6, 7),
  bedroom: mask(0, 1, 2),
  bathroom: mask(0, 1, 3),
};

/** Opt-in fixes of the entertainment quirks (envs.md §4); all off by default. */
export interface EntertainmentRules {
  /** In the kitchen with one snack seen, offer the walk to the seen snack (not the unseen one). */
  fixDeadlock?: boolean;
  /** While seated, also offer "stand up from the sofa". */
  fixSittingTrap?: boolean;
}

/**
 * Entertainment (VirtualHome-v2): bring the chips and the milk to the living room, turn on
 * the TV and sit on the sofa. State per envs.md §1.3.
 */
export class EntertainmentModel implements VirtualHomeModel {
  readonly labels = ENTERTAINMENT_LABELS;
  private readonly text = new EntertainmentText();
  private room = KITCHEN;
  private close = 0;
  private chips = ON_COUNTER;
  private milk = ON_COUNTER;
  private tv = false;
  private sitting = false;
  private facing = false;

  constructor(private readonly rules: EntertainmentRules = {}) {}

  reset(): void {
    this.room = KITCHEN;
    this.close = 0;
    this.chips = ON_COUNTER;
    this.milk = ON_COUNTER;
    this.tv = false;
    this.sitting = false;
    this.facing = false;
  }

  pack(): number {
    return (
      this.room |
      (this.close << 2) |
      (this.chips << 7) |
      (this.milk << 9) |
      (+this.tv << 11) |
      (+this.sitting << 12) |
      (+this.facing << 13)
    );
  }

  unpack(state: number): void {
    this.room = state & 3;
    this.close = (state >> 2) & 31;
    this.chips = (state >> 7) & 3;
    this.milk = (state >> 9) & 3;
    this.tv = ((state >> 11) & 1) === 1;
    this.sitting = ((state >> 12) & 1) === 1;
    this.facing = ((state >> 13) & 1) === 1;
  }

  private heldBits(): number {
    return (this.chips === HELD ? CHIPS : 0) | (this.milk === HELD ? MILK : 0);
  }

  /** Held, or lying in the agent's room (counter = kitchen, coffee table = living room). */
  private seesSnack(where: number): boolean {
    return (
      where === HELD ||
      (where === ON_COUNTER && this.room === KITCHEN) ||
      (where === ON_TABLE && this.room === LIVING_ROOM)
    );
  }

  /** Visible and in the close set (an edge needs both ends visible). */
  private near(bit: number): boolean {
    if ((this.close & bit) === 0) return false;
    if (bit === CHIPS) return this.seesSnack(this.chips);
    if (bit === MILK) return this.seesSnack(this.milk);
    return this.room === LIVING_ROOM;
  }

  validMask(): number {
    if (this.room === KITCHEN) return this.kitchenMask();
    if (this.room === LIVING_ROOM) return this.livingRoomMask();
    return this.room === BEDROOM ? S.bedroom : S.bathroom;
  }

  private kitchenMask(): number {
    const seeChips = this.seesSnack(this.chips);
    const seeMilk = this.seesSnack(this.milk);
    const holdChips = this.chips === HELD;
    const holdMilk = this.milk === HELD;
    const nearChips = this.near(CHIPS);
    const nearMilk = this.near(MILK);
    if (seeChips && seeMilk) {
      if (holdChips && holdMilk) return S.kitchenHoldBoth;
      if (holdChips) return nearMilk ? S.chipsHeldNearMilk : S.chipsHeldFar;
      if (holdMilk) return nearChips ? S.milkHeldNearChips : S.milkHeldFar;
      if (nearChips && nearMilk) return S.nearBoth;
      if (nearChips) return S.nearChips;
      if (nearMilk) return S.nearMilk;
      return S.nearNone;
    }
    const fix = this.rules.fixDeadlock === true;
    if (seeChips) {
      if (holdChips) return S.kitchenOnly;
      if (nearChips) return S.onlyChipsNear;
      return fix ? S.milkHeldFar : S.onlyChipsFar;
    }
    if (seeMilk) {
      if (holdMilk) return S.kitchenOnly;
      if (nearMilk) return S.onlyMilkNear;
      return fix ? S.chipsHeldFar : S.onlyMilkFar;
    }
    return S.kitchenOnly;
  }

  private livingRoomMask(): number {
    if (this.near(TABLE)) {
      const holdChips = this.chips === HELD;
      const holdMilk = this.milk === HELD;
      if (holdChips && holdMilk) return S.tableHoldBoth;
      if (holdMilk) return this.chips === ON_TABLE ? S.tableBlocked : S.tableMilk;
      if (holdChips) return this.milk === ON_TABLE ? S.tableBlocked : S.tableChips;
      return S.tableEmpty;
    }
    if (this.near(TV)) return this.tv ? S.tvOn : S.tvOff;
    if (this.near(SOFA)) {
      if (this.sitting) return this.rules.fixSittingTrap ? S.seatedFixed : S.seated;
      return this.tv ? S.sofaTvOn : S.sofaTvOff;
    }
    return S.livingNone;
  }

  apply(a: number): boolean {
    if (a <= 3) {
      if (this.sitting) return false;
      this.room = a;
      this.close = this.heldBits();
      this.facing = false;
      return true;
    }
    switch (a) {
      case A.walkChips:
        return this.walkTo(CHIPS, this.seesSnack(this.chips), this.snackRoom(this.chips));
      case A.walkMilk:
        return this.walkTo(MILK, this.seesSnack(this.milk), this.snackRoom(this.milk));
      case A.walkTable:
        return this.walkTo(TABLE, this.room === LIVING_ROOM, LIVING_ROOM);
      case A.walkTv:
        return this.walkTo(TV, this.room === LIVING_ROOM, LIVING_ROOM);
      case A.walkSofa:
        return this.walkTo(SOFA, this.room === LIVING_ROOM, LIVING_ROOM);
      case A.grabChips:
        if (!this.near(CHIPS) || this.chips === HELD) return false;
        this.chips = HELD;
        return true;
      case A.grabMilk:
        if (!this.near(MILK) || this.milk === HELD) return false;
        this.milk = HELD;
        return true;
      case A.putChips:
        if (this.chips !== HELD || !this.near(TABLE)) return false;
        this.chips = ON_TABLE;
        return true;
      case A.putMilk:
        if (this.milk !== HELD || !this.near(TABLE)) return false;
        this.milk = ON_TABLE;
        return true;
      case A.tvOn:
      case A.tvOff: {
        const wantOn = a === A.tvOn;
        const freeHand = this.heldBits() !== (CHIPS | MILK);
        if (!this.near(TV) || !freeHand || this.tv === wantOn) return false;
        this.tv = wantOn;
        return true;
      }
      case A.sit:
        if (!this.near(SOFA) || this.sitting) return false;
        this.sitting = true;
        this.facing = true;
        return true;
      case A.standUp:
        if (!this.sitting) return false;
        this.sitting = false;
        return true;
    }
    return false;
  }

  /** The room a snack is in; a held snack is wherever the agent is. */
  private snackRoom(where: number): number {
    if (where === HELD) return this.room;
    return where === ON_TABLE ? LIVING_ROOM : KITCHEN;
  }

  /** Walk to an object: fails while seated or when the object cannot be seen. */
  private walkTo(bit: number, visible: boolean, room: number): boolean {
    if (this.sitting || !visible) return false;
    this.room = room;
    this.close = bit | this.heldBits();
    return true;
  }

  success(): boolean {
    return (
      this.room === LIVING_ROOM &&
      this.facing &&
      this.tv &&
      this.sitting &&
      (this.near(MILK) || this.milk === ON_TABLE) &&
      (this.near(CHIPS) || this.chips === ON_TABLE)
    );
  }

  observation(): string {
    const k = TextKey;
    const key =
      this.room |
      (this.seesSnack(this.chips) ? k.seeChips : 0) |
      (this.seesSnack(this.milk) ? k.seeMilk : 0) |
      (this.chips === HELD ? k.holdChips : 0) |
      (this.milk === HELD ? k.holdMilk : 0) |
      (this.near(CHIPS) ? k.nearChips : 0) |
      (this.near(MILK) ? k.nearMilk : 0) |
      (this.near(TABLE) ? k.nearTable : 0) |
      (this.near(TV) ? k.nearTv : 0) |
      (this.near(SOFA) ? k.nearSofa : 0) |
      (this.chips === ON_TABLE ? k.chipsOnTable : 0) |
      (this.milk === ON_TABLE ? k.milkOnTable : 0) |
      (this.tv ? k.tvOn : 0) |
      (this.sitting ? k.sitting : 0);
    return this.text.render(key);
  }
}
