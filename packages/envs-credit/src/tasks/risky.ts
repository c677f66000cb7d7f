import type { CreditMdp, CreditState } from '../mdp.js';
import { CREDIT_GAMMA, chance, go, running, terminal } from './build.js';

/** P(the soup arrives) when running. */
export const RUN_SUCCESS = 0.5;

/** The safe label (one room closer) and the risky one (there at once, or the soup falls). */
export const WALK_LABEL = 'walk to the next room';
export const RUN_LABEL = 'run to the living room';

function riskyMdp(id: string, rooms: number): CreditMdp {
  const states: CreditState[] = [];
  for (let k = rooms; k >= 1; k--) {
    states.push(
      running(
        `soup-${k}`,
        [
          'You are holding a full bowl of soup.',
          `Your friend is waiting in the living room, ${k === 1 ? '1 room' : `${k} rooms`} away.`,
          'If you walk, you go one room at a time.',
          'If you run, you get there at once, but half of the time the soup falls on the floor.',
        ],
        [
          go(WALK_LABEL, k > 1 ? `soup-${k - 1}` : 'success', k > 1 ? 0 : 1),
          chance(RUN_LABEL, [
            { state: 'success', prob: RUN_SUCCESS, reward: 1 },
            { state: 'failure', prob: 1 - RUN_SUCCESS, reward: 0 },
          ]),
        ],
      ),
    );
  }
  states.push(
    terminal('success', ['You give the soup to your friend. Your friend is happy.'], true),
    terminal('failure', ['The soup falls on the floor. The task has failed.'], false),
  );
  return { id, gamma: CREDIT_GAMMA, start: `soup-${rooms}`, maxSteps: rooms, states };
}

/**
 * Task 4, a stochastic transition: carry soup to a friend N rooms away. Walking is safe and
 * takes N turns (+1 on arrival); running gets there at once with probability 1/2 (+1) and spills
 * the soup otherwise (0). N = 3: walking is worth γ² = 0.9025, running 0.5.
 */
export function riskyTask(): CreditMdp {
  return riskyMdp('credit/risky', 3);
}

/** The long variant: N = 8, walking is worth γ⁷ ≈ 0.698 and running still 0.5. */
export function riskyLongTask(): CreditMdp {
  return riskyMdp('credit/risky-long', 8);
}
