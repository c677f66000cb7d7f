import { describe, expect, it } from 'vitest';
import { CELL, MOVE } from '../src/codes.js';
import { observationText } from '../src/observation.js';
import { DEFAULT_REWARDS } from '../src/rewards.js';
import { OVERCOOKED_TASKS } from '../src/tasks.js';
import { macroView } from '../src/view.js';
import { World } from '../src/world.js';

const { right, down, left, up } = MOVE;

function world(task: 'tomato-salad' | 'tomato-lettuce-salad' = 'tomato-salad'): World {
  return new World(OVERCOOKED_TASKS[task], DEFAULT_REWARDS);
}

function moves(w: World, list: readonly number[]): number[] {
  return list.map((m) => w.primitiveStep(m));
}

describe('primitive dynamics', () => {
  it('walks on floor, picks up from a counter and puts down on an empty counter', () => {
    const w = world();
    moves(w, [right, up]);
    expect(w.agent).toMatchObject({ x: 1, y: 5 });
    expect(w.agent.holding).toBe(w.foods[0]);
    expect(w.cells[0 * 7 + 5]).toBe(CELL.counter);
    moves(w, [right]);
    expect(w.foods[0]).toMatchObject({ x: 1, y: 6 });
    expect(w.cells[1 * 7 + 6]).toBe(CELL.tomato);
    expect(w.envStep).toBe(3);
  });

  it('chops on the knife three times, then the chopped food is taken', () => {
    const w = world();
    moves(w, [right, up, left, left, left, left]);
    expect(w.agent).toMatchObject({ x: 1, y: 1 });
    moves(w, [left]);
    expect(w.knives[0]?.holding).toBe(w.foods[0]);
    const rewards = moves(w, [left, left, left]);
    expect(rewards).toEqual([-0.001, -0.001, 0.2 - 0.001]);
    expect(w.foods[0]).toMatchObject({ chops: 3, chopped: true });
    moves(w, [left]);
    expect(w.agent.holding).toBe(w.foods[0]);
    expect(w.knives[0]?.holding).toBeNull();
  });

  it('quirk: out-of-view chop beliefs are divided by 3 every step', () => {
    const w = world();
    const tomato = w.foods[0];
    if (!tomato) throw new Error('no tomato');
    tomato.chops = 3;
    tomato.chopped = true;
    w.updateBeliefs();
    expect(w.beliefChop[0]).toBe(1);
    moves(w, [down]); // (2,4): the tomato at (0,5) is still in view
    expect(w.beliefChop[0]).toBe(1);
    moves(w, [down, down]); // (3,4) and (4,4): out of view
    expect(w.beliefChop[0]).toBeCloseTo(1 / 9, 15);
    expect([w.beliefX[0], w.beliefY[0]]).toEqual([0, 5]);
  });

  it('quirk: a wrong delivery writes the food into its start cell over another item', () => {
    const w = world();
    // Tomato to (1,6); bowl onto the tomato's empty start cell (0,5); tomato delivered alone.
    moves(w, [right, up, right]);
    moves(w, [down, down, down, down, down]);
    expect(w.agent.holding).toBe(w.plate);
    moves(w, [up, up, up, up, up]);
    expect(w.plate).toMatchObject({ x: 0, y: 5 });
    moves(w, [right]);
    expect(w.agent.holding).toBe(w.foods[0]);
    moves(w, [down, down, left, left, left, left]);
    expect(w.agent).toMatchObject({ x: 3, y: 1 });
    const r = w.primitiveStep(left);
    expect(r).toBeCloseTo(-0.101, 12);
    expect(w.foods[0]).toMatchObject({ x: 0, y: 5 });
    expect(w.plate).toMatchObject({ x: 0, y: 5 });
    expect(w.cells[0 * 7 + 5]).toBe(CELL.tomato);
  });

  it('quirk: the tomato-salad text handles an empty-handed agent at (2,1)', () => {
    const w = world();
    moves(w, [down, left, left, left]);
    expect(w.agent).toMatchObject({ x: 2, y: 1 });
    const text = observationText(w.task, macroView(w));
    expect(text).toContain('You stand with empty hands.');
  });

  it('beliefs follow the view and fall back to the start cell when the old belief is in view', () => {
    const w = world();
    // Carry the bowl to the counter (6,1) and walk away to (1,5).
    moves(w, [down, down, down, down, right, down, left, left, left, left, down]);
    expect(w.plate).toMatchObject({ x: 6, y: 1 });
    moves(w, [up, up, up, up, right, right, right, right]);
    expect(w.agent).toMatchObject({ x: 1, y: 5 });
    expect([w.beliefX[1], w.beliefY[1]]).toEqual([6, 1]);
    // Move the bowl unseen (as a teleport would): the stale belief survives out of view.
    w.plate.x = 0;
    w.plate.y = 1;
    w.updateBeliefs();
    expect([w.beliefX[1], w.beliefY[1]]).toEqual([6, 1]);
    moves(w, [down, down, down]);
    expect([w.beliefX[1], w.beliefY[1]]).toEqual([6, 1]);
    // Once (6,1) is in view without the bowl there, the bowl is believed at its start cell.
    moves(w, [left, left]);
    expect(w.agent).toMatchObject({ x: 4, y: 3 });
    expect([w.beliefX[1], w.beliefY[1]]).toEqual([6, 5]);
  });
});
