import { describe, expect, it } from 'vitest';
import { chopOnBoard, expectRounded, fresh, play } from './helpers.js';

describe('overcooked/tomato-lettuce-salad scenarios (envs.md section 5)', () => {
  it('starts with the eight default labels', () => {
    const { first } = fresh('tomato-lettuce-salad');
    expect(first.actions).toEqual([
      'pick up the tomato',
      'pick up the lettuce',
      'pick up the onion',
      'take the empty bowl',
      'walk to the first cutting board',
      'walk to the second cutting board',
      'serve nothing',
      'chop nothing',
    ]);
  });

  it('O-7: the 45-step sequence with both boards', () => {
    const { env } = fresh('tomato-lettuce-salad');
    const labels = [
      ...chopOnBoard('tomato', 'first'),
      ...chopOnBoard('lettuce', 'second'),
      'take the empty bowl',
      'put the tomato in the bowl',
      'put the lettuce in the bowl',
      'serve the dish',
    ];
    const steps = play(env, labels);
    expect(steps.map((s) => s.info.primitiveSteps)).toEqual([2, 5, 3, 5, 6, 3, 8, 9, 2, 2]);
    // Label 3 reads "take the empty bowl" until the 8th macro, then "take the bowl".
    for (const s of steps.slice(0, 7)) expect(s.actions?.[3]).toBe('take the empty bowl');
    expect(steps[7]?.actions?.[3]).toBe('take the bowl');
    for (const s of steps.slice(0, 9)) expect(s.terminated || s.truncated).toBe(false);
    const last = steps[9];
    expect(last?.terminated).toBe(true);
    expectRounded(last?.info.discountedReturn as number, 0.94766, 5);
    expect(last?.info.length).toBe(45);
  });

  it('O-7: labels while holding the bowl and in front of the second board', () => {
    const { env } = fresh('tomato-lettuce-salad');
    const steps = play(env, [
      ...chopOnBoard('tomato', 'first'),
      'pick up the lettuce',
      'put the lettuce on the second cutting board',
    ]);
    expect(steps[4]?.actions?.[7]).toBe('chop the lettuce');
    expect(steps[3]?.actions?.slice(4, 6)).toEqual([
      'put the lettuce on the first cutting board',
      'put the lettuce on the second cutting board',
    ]);
    const bowl = env.stepSync('chop the lettuce') && env.stepSync('take the empty bowl');
    expect(bowl.actions).toEqual([
      'put the tomato in the bowl',
      'put the lettuce in the bowl',
      'put the onion in the bowl',
      'take the empty bowl',
      'put the bowl on the first cutting board',
      'put the bowl on the second cutting board',
      'serve the dish',
      'chop nothing',
    ]);
  });

  it('the subtask reward is paid for lettuce and tomato but not for onion', () => {
    const { env } = fresh('tomato-lettuce-salad');
    const [, , chop] = play(env, [...chopOnBoard('onion', 'first')]);
    expect(chop?.info.primitiveSteps).toBe(3);
    expectRounded(chop?.reward as number, -0.001 * (1 + 0.99 + 0.99 ** 2), 12);
  });
});
