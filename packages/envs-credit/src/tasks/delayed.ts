import type { CreditMdp, CreditState } from '../mdp.js';
import { CREDIT_GAMMA, go, running, terminal } from './build.js';

/** The immediate reward of the wrong choice at turn 1 (a lure for myopic credit). */
export const LURE_REWARD = 0.3;

/** The two filler labels; both move one step down the hallway. */
export const FILLER_LABELS = ['walk down the hallway', 'walk on'] as const;

function steps(k: number): string {
  return k === 1 ? '1 step' : `${k} steps`;
}

function delayedMdp(id: string, fillers: number): CreditMdp {
  const states: CreditState[] = [
    running(
      'kitchen',
      [
        'You are in the kitchen.',
        'Your friend in the bedroom is hungry and needs the bread.',
        'There is bread and there are chips on the table.',
        `The bedroom is at the end of the hallway, ${steps(fillers)} away.`,
      ],
      [
        go('grab the bread', `bread-${fillers}`),
        go('grab the chips', `chips-${fillers}`, LURE_REWARD),
      ],
    ),
  ];
  for (const item of ['bread', 'chips'] as const) {
    for (let k = fillers; k >= 1; k--) {
      // The last filler step enters the bedroom: +1 with the bread, 0 with the chips.
      const next = k > 1 ? `${item}-${k - 1}` : item === 'bread' ? 'success' : 'failure';
      const reward = k === 1 && item === 'bread' ? 1 : 0;
      states.push(
        running(
          `${item}-${k}`,
          [
            `You are in the hallway, holding the ${item}.`,
            'Your friend in the bedroom is hungry and needs the bread.',
            `The bedroom is ${steps(k)} away.`,
          ],
          FILLER_LABELS.map((label) => go(label, next, reward)),
        ),
      );
    }
  }
  states.push(
    terminal('success', ['You give the bread to your friend. Your friend is happy.'], true),
    terminal(
      'failure',
      ['You give the chips to your friend, who needs the bread. The task has failed.'],
      false,
    ),
  );
  return { id, gamma: CREDIT_GAMMA, start: 'kitchen', maxSteps: fillers + 1, states };
}

/**
 * Task 2, turn-level credit: at turn 1 grab the bread (what the friend needs) or the chips (an
 * immediate +0.3); then D filler turns down the hallway, each offering two labels with the same
 * effect; the last one enters the bedroom, where the bread gives +1 and the chips nothing.
 * D = 4.
 */
export function delayedTask(): CreditMdp {
  return delayedMdp('credit/delayed', 4);
}

/** The long variant: D = 12 filler turns. */
export function delayedLongTask(): CreditMdp {
  return delayedMdp('credit/delayed-long', 12);
}
