import type { CreditMdp, CreditState } from '../mdp.js';
import { CREDIT_GAMMA, go, running, terminal } from './build.js';

/** The loop label: it changes nothing and costs a turn. */
export const LOOP_LABEL = 'look in the fridge';

const GOAL = 'Your friend wants a glass of milk from the fridge in the kitchen.';

/** One room on the way: the right label goes on, the wrong one ends the episode. */
interface Room {
  id: string;
  name: string;
  right: string;
  wrong: string;
}

function loopMdp(id: string, rooms: readonly Room[], maxSteps: number): CreditMdp {
  const states: CreditState[] = rooms.map((room, i) => {
    const next = rooms[i + 1]?.id ?? 'kitchen';
    return running(
      room.id,
      [
        `You are in the ${room.name}.`,
        GOAL,
        room.right === 'kitchen'
          ? 'The kitchen is the next room.'
          : `The way to the kitchen goes through the ${room.right}.`,
      ],
      [go(`walk to the ${room.right}`, next), go(`walk to the ${room.wrong}`, 'failure')],
    );
  });
  states.push(
    running(
      'kitchen',
      ['You are in the kitchen, next to the fridge.', 'The milk is in the fridge.', GOAL],
      [go('take the milk from the fridge', 'success', 1), go(LOOP_LABEL, 'kitchen')],
    ),
    terminal('success', ['You take the milk to your friend. Your friend is happy.'], true),
    terminal('failure', ['There is no milk in that room. The task has failed.'], false),
  );
  return { id, gamma: CREDIT_GAMMA, start: rooms[0]!.id, maxSteps, states };
}

/**
 * Task 3, a loop that outcome-only credit rewards: from the hallway, walk to the kitchen (the
 * other way ends the episode with 0); in the kitchen, take the milk (+1, success) or look in the
 * fridge, which changes nothing and wastes a turn. Every episode that looks in the fridge has
 * already passed the risky choice, so it succeeds more often than the average episode.
 */
export function loopTask(): CreditMdp {
  return loopMdp(
    'credit/loop',
    [{ id: 'hallway', name: 'hallway', right: 'kitchen', wrong: 'bathroom' }],
    12,
  );
}

/**
 * The long variant: three rooms with a wrong way each (hallway → living room → dining room →
 * kitchen), so an episode that reaches the fridge is rarer and the loop's outcome-only credit
 * larger.
 */
export function loopLongTask(): CreditMdp {
  return loopMdp(
    'credit/loop-long',
    [
      { id: 'hallway', name: 'hallway', right: 'living room', wrong: 'bathroom' },
      { id: 'living-room', name: 'living room', right: 'dining room', wrong: 'bedroom' },
      { id: 'dining-room', name: 'dining room', right: 'kitchen', wrong: 'bathroom' },
    ],
    14,
  );
}
