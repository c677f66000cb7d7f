import { type FoodNouns, KITCHEN, ROOM_NAMES } from './tasks.js';

/** The facts the food-preparation prompt states. */
export interface FoodView {
  room: number;
  /** The item can be seen (held, or in the kitchen and not shut in the appliance). */
  seeItem: boolean;
  held: boolean;
  /** The item lies in the appliance. */
  inAppliance: boolean;
  nearItem: boolean;
  nearAppliance: boolean;
  open: boolean;
}

/** Writes (and caches) the food-preparation prompt for each distinct combination of facts. */
export class FoodPreparationText {
  private readonly cache = new Map<number, string>();

  constructor(private readonly nouns: FoodNouns) {}

  render(v: FoodView): string {
    const key =
      v.room |
      (+v.seeItem << 2) |
      (+v.held << 3) |
      (+v.inAppliance << 4) |
      (+v.nearItem << 5) |
      (+v.nearAppliance << 6) |
      (+v.open << 7);
    let text = this.cache.get(key);
    if (text === undefined) {
      text = this.write(v);
      this.cache.set(key, text);
    }
    return text;
  }

  private write(v: FoodView): string {
    const { item, appliance, plural } = this.nouns;
    const be = plural ? 'are' : 'is';
    const parts = [
      `The house has four rooms: the kitchen, the bathroom, the bedroom and the living room. You are in the ${ROOM_NAMES[v.room]}.`,
    ];
    const empty = 'You are not holding anything.';
    if (v.room !== KITCHEN) {
      parts.push('Nothing here helps with the task.');
      parts.push(v.held ? `You are holding the ${item}.` : empty);
    } else if (v.held) {
      parts.push(`You see the ${appliance}.`, `You are holding the ${item}.`);
      parts.push(
        v.nearAppliance
          ? `You are standing next to the ${appliance}.`
          : `You are not next to the ${appliance}.`,
      );
    } else if (!v.seeItem) {
      parts.push(`You see the ${appliance}; the ${item} ${be} shut inside it.`, empty);
    } else {
      parts.push(
        v.inAppliance
          ? `You see the ${appliance}; the ${item} ${be} inside it.`
          : `You see the ${item} on the table and the ${appliance}.`,
        empty,
      );
      if (v.nearItem && v.nearAppliance) {
        parts.push(`You are standing next to the ${appliance} and the ${item}.`);
      } else if (v.nearItem) {
        parts.push(`You are standing next to the ${item}.`);
      } else if (v.nearAppliance) {
        parts.push(`You are standing next to the ${appliance}.`);
      } else {
        parts.push(`You are not next to the ${item} or the ${appliance}.`);
      }
    }
    if (v.room === KITCHEN) {
      parts.push(v.open ? `The ${appliance} door is open.` : `The ${appliance} door is shut.`);
    }
    parts.push(`To heat up the ${item} in the ${appliance}, your next step is to`);
    return parts.join(' ');
  }
}
