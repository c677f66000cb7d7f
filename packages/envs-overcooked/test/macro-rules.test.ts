import { describe, expect, it } from 'vitest';
import { CELL } from '../src/index.js';
import { chopOnBoard, expectRounded, fresh, OPTIMAL_TOMATO_SALAD, play } from './helpers.js';

const STEP = -0.001;
/** Reward of a macro of `k` primitive steps that only pays the step cost. */
const idle = (k: number): number => (STEP * (1 - 0.99 ** k)) / (1 - 0.99);

describe('macro-action stop rules', () => {
  it('walking empty-handed to the board stops on arrival; already there it costs one stay', () => {
    const { env } = fresh('tomato-salad');
    const [walk, again] = play(env, ['walk to the cutting board', 'walk to the cutting board']);
    expect(walk?.info.primitiveSteps).toBe(3);
    expect(again?.info.primitiveSteps).toBe(1);
    expect(env.snapshot().agent).toMatchObject({ x: 1, y: 1 });
  });

  it('serving empty-handed stops next to the delivery; already there it is one no-op step', () => {
    const { env } = fresh('tomato-salad');
    const [serve, again] = play(env, ['serve nothing', 'serve nothing']);
    expect(serve?.info.primitiveSteps).toBe(5);
    expect(again?.info.primitiveSteps).toBe(1);
    expectRounded(again?.reward as number, STEP, 12);
    expect(env.snapshot().agent).toMatchObject({ x: 3, y: 1, holding: null });
  });

  it('getting a food that is already held, or inside the held bowl, is one stay step', () => {
    const { env } = fresh('tomato-salad');
    const [, held] = play(env, ['pick up the tomato', 'pick up the tomato']);
    expect(held?.info.primitiveSteps).toBe(1);
    play(env, ['put the tomato on the cutting board', 'chop the tomato', 'take the bowl']);
    const [, inBowl] = play(env, ['put the tomato in the bowl', 'put the tomato in the bowl']);
    expect(inBowl?.info.primitiveSteps).toBe(1);
  });

  it('getting a food that lies unchopped on a board stops on arrival without taking it', () => {
    const { env } = fresh('tomato-salad');
    play(env, ['pick up the tomato', 'put the tomato on the cutting board', 'serve nothing']);
    const get = env.stepSync('pick up the tomato');
    expect(get.info.primitiveSteps).toBe(2);
    const s = env.snapshot();
    expect(s.agent).toMatchObject({ x: 1, y: 1, holding: null });
    expect(s.boards[0]?.holding).toMatchObject({ type: 'food', kind: 'tomato', chops: 0 });
    expect(env.stepSync('pick up the tomato').info.primitiveSteps).toBe(1);
  });

  it('taking the bowl while holding an unchopped food walks there, then stays once', () => {
    const { env } = fresh('tomato-salad');
    const [, bowl] = play(env, ['pick up the tomato', 'take the bowl']);
    // (1,5) -> (5,5) is 4 moves, then one stay step.
    expect(bowl?.info.primitiveSteps).toBe(5);
    expect(env.snapshot().agent.holding).toMatchObject({ type: 'food', kind: 'tomato' });
    expect(env.snapshot().bowl).toMatchObject({ x: 6, y: 5, contents: [] });
  });

  it('taking the bowl from a board with a chopped food in hand is one interaction plus a stay', () => {
    const { env } = fresh('tomato-lettuce-salad');
    const steps = play(env, [
      ...chopOnBoard('tomato', 'first'),
      'take the empty bowl',
      'put the bowl on the second cutting board',
      'pick up the tomato',
      'take the empty bowl',
    ]);
    // From (2,1) next to the second board: one move up, then take the chopped tomato.
    expect(steps[5]?.info.primitiveSteps).toBe(2);
    // (1,1) -> (2,1) is 1 move, then the combined interaction, then one stay step.
    expect(steps[6]?.info.primitiveSteps).toBe(3);
    const s = env.snapshot();
    expect(s.agent.holding).toEqual({ type: 'bowl', contents: ['tomato'] });
    expect(s.boards[1]?.holding).toBeNull();
    expect(steps[6]?.actions?.[3]).toBe('take the bowl');
  });

  it('chopping while holding something pushes three times without effect', () => {
    const { env } = fresh('tomato-lettuce-salad');
    const steps = play(env, [
      'pick up the tomato',
      'put the tomato on the first cutting board',
      'pick up the onion',
      'put the onion on the first cutting board',
    ]);
    expect(steps.map((s) => s.info.primitiveSteps)).toEqual([2, 5, 6, 6]);
    expect(steps[3]?.actions?.[7]).toBe('chop the tomato');
    const chop = env.stepSync('chop the tomato');
    expect(chop.info.primitiveSteps).toBe(3);
    expectRounded(chop.reward, idle(3), 12);
    expect(env.snapshot().boards[0]?.holding).toMatchObject({ kind: 'tomato', chops: 0 });
    expect(env.snapshot().agent.holding).toMatchObject({ kind: 'onion' });
  });

  it('chop with no unchopped food next to the agent is one stay step', () => {
    const { env } = fresh('tomato-salad');
    const chop = env.stepSync('chop nothing');
    expect(chop.info.primitiveSteps).toBe(1);
    expectRounded(chop.reward, STEP, 12);
  });
});

describe('deliveries', () => {
  it('a wrong delivery costs 0.1 and sends the food back unchopped (reward loop)', () => {
    const { env } = fresh('tomato-salad');
    const steps = play(env, [...chopOnBoard('tomato'), 'pick up the tomato', 'serve the dish']);
    const wrong = steps[4];
    expect(wrong?.info.primitiveSteps).toBe(3);
    expectRounded(wrong?.reward as number, idle(3) - 0.1 * 0.99 ** 2, 12);
    expect(wrong?.terminated || wrong?.truncated).toBe(false);
    const s = env.snapshot();
    expect(s.foods[0]).toEqual({ kind: 'tomato', x: 0, y: 5, chops: 0, chopped: false });
    expect(s.cells[0]?.[5]).toBe(CELL.tomato);
    // The food can be chopped again for another subtask reward.
    const again = play(env, chopOnBoard('tomato'));
    expect(again.map((x) => x.info.primitiveSteps)).toEqual([7, 5, 3]);
    expectRounded(again[2]?.reward as number, idle(3) + 0.2 * 0.99 ** 2, 12);
  });

  it('with fixes.subtaskRewardOnce the second chop of the same food pays nothing', () => {
    const { env } = fresh('tomato-salad', { fixes: { subtaskRewardOnce: true } });
    play(env, [
      ...chopOnBoard('tomato'),
      'pick up the tomato',
      'serve the dish',
      'pick up the tomato',
      'put the tomato on the cutting board',
    ]);
    expectRounded(env.stepSync('chop the tomato').reward, idle(3), 12);
  });

  it('a bowl with the wrong foods goes back to its cell and the foods to theirs', () => {
    const { env } = fresh('tomato-lettuce-salad');
    play(env, [
      ...chopOnBoard('tomato', 'first'),
      'take the empty bowl',
      'put the tomato in the bowl',
    ]);
    const serve = env.stepSync('serve the dish');
    expect(serve.info.primitiveSteps).toBe(3);
    expect(serve.terminated).toBe(false);
    expectRounded(serve.reward, idle(3) - 0.1 * 0.99 ** 2, 12);
    const s = env.snapshot();
    expect(s.bowl).toEqual({ x: 6, y: 5, contents: [] });
    expect(s.foods[0]).toMatchObject({ x: 0, y: 5, chopped: false, chops: 0 });
    expect(s.agent.holding).toBeNull();
    expect(s.cells[6]?.[5]).toBe(CELL.plate);
    expect(s.cells[0]?.[5]).toBe(CELL.tomato);
  });

  it('custom rewards are used for every event', () => {
    const rewards = { subtask: 0.5, correctDelivery: 2, wrongDelivery: -1, step: 0 };
    const { env } = fresh('tomato-salad', { rewards });
    const steps = play(env, OPTIMAL_TOMATO_SALAD);
    expect(steps.map((s) => s.reward)).toEqual([0, 0, 0.5 * 0.99 ** 2, 0, 0, 2 * 0.99 ** 6]);
    expectRounded(steps[5]?.info.discountedReturn as number, 0.5 * 0.99 ** 9 + 2 * 0.99 ** 27, 12);
  });
});

describe('step limit', () => {
  it('with fixes.strictStepLimit a macro stops at the limit', () => {
    const { env } = fresh('tomato-salad', { fixes: { strictStepLimit: true } });
    for (let i = 0; i < 198; i++) env.stepSync('chop nothing');
    const last = env.stepSync('take the bowl');
    expect(last.info.primitiveSteps).toBe(2);
    expect(last.truncated).toBe(true);
    expect(last.info.length).toBe(200);
  });

  it('maxPrimitiveSteps changes the limit', () => {
    const { env } = fresh('tomato-salad', { maxPrimitiveSteps: 5 });
    const steps = play(env, ['chop nothing', 'chop nothing', 'chop nothing', 'chop nothing']);
    expect(steps.map((s) => s.truncated)).toEqual([false, false, false, false]);
    const fifth = env.stepSync('take the bowl');
    expect(fifth.truncated).toBe(true);
    expect(fifth.info.length).toBe(10);
  });
});
