import type { CreditMdp } from '../mdp.js';
import { CREDIT_GAMMA, go, running, terminal } from './build.js';

/** The word that decides success; the other labels differ from the right one only in it. */
export const KEY_WORD = 'clean';

function keyTokenMdp(
  id: string,
  adjectives: readonly string[],
  label: (adjective: string) => string,
): CreditMdp {
  const cups = adjectives.map((a) => `a ${a} cup`);
  const listed = `${cups.slice(0, -1).join(', ')} and ${cups.at(-1)}`;
  return {
    id,
    gamma: CREDIT_GAMMA,
    start: 'table',
    maxSteps: 1,
    states: [
      running(
        'table',
        [
          'You are in the kitchen.',
          `There is ${listed} on the table.`,
          `Only the ${KEY_WORD} cup goes on the shelf.`,
        ],
        adjectives.map((a) =>
          go(label(a), a === KEY_WORD ? 'success' : 'failure', a === KEY_WORD ? 1 : 0),
        ),
      ),
      terminal('success', [`The ${KEY_WORD} cup is on the shelf. The kitchen is tidy.`], true),
      terminal('failure', ['That cup does not go on the shelf. The task has failed.'], false),
    ],
  };
}

/**
 * Task 1, intra-action credit: one decision among labels that share every word but one, the
 * adjective in the middle ("put the clean cup on the shelf" against "put the dirty cup on the
 * shelf"). The right label ends the episode with +1, any other with 0.
 */
export function keyTokenTask(): CreditMdp {
  return keyTokenMdp(
    'credit/key-token',
    ['dirty', KEY_WORD, 'full'],
    (a) => `put the ${a} cup on the shelf`,
  );
}

/**
 * The long variant: four labels of fourteen words ("pick up the clean cup from the table and put
 * it on the shelf"), the key word fourth, ten words after it.
 */
export function keyTokenLongTask(): CreditMdp {
  return keyTokenMdp(
    'credit/key-token-long',
    ['dirty', 'full', KEY_WORD, 'warm'],
    (a) => `pick up the ${a} cup from the table and put it on the shelf`,
  );
}
