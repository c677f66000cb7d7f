import { BATHROOM, BEDROOM, KITCHEN, LIVING_ROOM, ROOM_NAMES } from './tasks.js';

/** Bits of the feature key the entertainment prompt depends on (bits 0-1 hold the room). */
export const TextKey = {
  seeChips: 1 << 2,
  seeMilk: 1 << 3,
  holdChips: 1 << 4,
  holdMilk: 1 << 5,
  nearChips: 1 << 6,
  nearMilk: 1 << 7,
  nearTable: 1 << 8,
  nearTv: 1 << 9,
  nearSofa: 1 << 10,
  chipsOnTable: 1 << 11,
  milkOnTable: 1 << 12,
  tvOn: 1 << 13,
  sitting: 1 << 14,
} as const;

const K = TextKey;

/** Writes (and caches) the entertainment prompt for each distinct feature key. */
export class EntertainmentText {
  private readonly cache = new Map<number, string>();

  render(key: number): string {
    let text = this.cache.get(key);
    if (text === undefined) {
      text = write(key);
      this.cache.set(key, text);
    }
    return text;
  }
}

function both(a: string | null, b: string | null): string {
  if (a && b) return `${a} and ${b}`;
  return a ?? b ?? '';
}

function write(key: number): string {
  const has = (bit: number): boolean => (key & bit) !== 0;
  const room = key & 3;
  const parts = [
    `The house has four rooms: the kitchen, the bathroom, the bedroom and the living room. You are in the ${ROOM_NAMES[room]}.`,
  ];
  const held = both(has(K.holdChips) ? 'the chips' : null, has(K.holdMilk) ? 'the milk' : null);
  const hands = held ? `You are holding ${held}.` : 'You are not holding anything.';
  if (room === KITCHEN) {
    const seen = both(
      has(K.seeChips) && !has(K.holdChips) ? 'the chips' : null,
      has(K.seeMilk) && !has(K.holdMilk) ? 'the milk' : null,
    );
    if (seen) {
      parts.push(`On the kitchen counter you see ${seen}.`);
      const near = both(
        has(K.nearChips) && !has(K.holdChips) ? 'the chips' : null,
        has(K.nearMilk) && !has(K.holdMilk) ? 'the milk' : null,
      );
      parts.push(
        near
          ? `You are standing next to ${near}.`
          : `You are not next to ${seen.replace(' and ', ' or ')}.`,
      );
    } else {
      parts.push('Nothing else here helps with the task.');
    }
    parts.push(hands);
  } else if (room === LIVING_ROOM) {
    parts.push('You see a coffee table, a TV and a sofa.');
    const near = has(K.nearTable)
      ? 'the coffee table'
      : has(K.nearTv)
        ? 'the TV'
        : has(K.nearSofa)
          ? 'the sofa'
          : null;
    if (has(K.sitting)) parts.push('You are sitting on the sofa.');
    else
      parts.push(near ? `You are standing next to ${near}.` : 'You are not next to any of them.');
    parts.push(has(K.tvOn) ? 'The TV is on.' : 'The TV is off.');
    parts.push(hands);
    const onTable = both(
      has(K.chipsOnTable) ? 'the chips' : null,
      has(K.milkOnTable) ? 'the milk' : null,
    );
    if (onTable) {
      // "the chips" (and "the chips and the milk") take "are"; "the milk" alone takes "is"
      const be = has(K.chipsOnTable) ? 'are' : 'is';
      parts.push(`${capitalise(onTable)} ${be} on the coffee table.`);
    }
  } else if (room === BEDROOM || room === BATHROOM) {
    parts.push('Nothing here helps with the task.', hands);
  }
  parts.push('To enjoy the chips and the milk while watching TV, your next step is to');
  return parts.join(' ');
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
