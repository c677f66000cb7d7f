import { describe, expect, it } from 'vitest';
import { creditMdp } from '../src/tasks.js';
import { creditTokenMdp } from '../src/token-mdp.js';

describe('creditTokenMdp', () => {
  it('keeps the states in order, one token per label, expected rewards, outcome distributions', () => {
    const { tokenMdp, stateIds, labels, stateIndex } = creditTokenMdp('credit/risky');
    expect(stateIds).toEqual(['soup-3', 'soup-2', 'soup-1', 'success', 'failure']);
    expect(labels[0]).toEqual(['walk to the next room', 'run to the living room']);
    expect(labels[3]).toEqual([]);
    expect(stateIndex.get('soup-1')).toBe(2);
    const soup1 = tokenMdp.states[2]!;
    expect(soup1.actions.map((a) => a.tokens)).toEqual([[0], [1]]);
    // walk from soup-1: +1 for sure; run: ½·1 + ½·0 = 0.5 expected
    expect(soup1.actions[0]).toEqual({ tokens: [0], reward: 1, next: [{ state: 3, prob: 1 }] });
    expect(soup1.actions[1]).toEqual({
      tokens: [1],
      reward: 0.5,
      next: [
        { state: 3, prob: 0.5 },
        { state: 4, prob: 0.5 },
      ],
    });
    expect(tokenMdp.states[4]!.actions).toEqual([]);
    expect(creditMdp('risky').states.length).toBe(tokenMdp.states.length);
  });
});
