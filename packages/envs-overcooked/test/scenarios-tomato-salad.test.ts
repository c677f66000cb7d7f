import { describe, expect, it } from 'vitest';
import { chopOnBoard, expectRounded, fresh, OPTIMAL_TOMATO_SALAD, play } from './helpers.js';

const START_LABELS = [
  'pick up the tomato',
  'take the bowl',
  'walk to the cutting board',
  'serve nothing',
  'chop nothing',
];

describe('overcooked/tomato-salad scenarios (envs.md section 5)', () => {
  it('starts with only the tomato noticed and the five default labels', () => {
    const { first } = fresh('tomato-salad');
    expect(first.actions).toEqual(START_LABELS);
    expect(first.reward).toBe(0);
    expect(first.terminated || first.truncated).toBe(false);
    expect(first.observation).toContain('You can see a tomato waiting on its counter.');
    expect(first.observation).not.toContain('You can see a tomato and');
    expect(first.observation).toMatch(/next step is to$/);
  });

  it('O-1: pick up, put on board, chop, take bowl, put tomato in bowl, serve', () => {
    const { env } = fresh('tomato-salad');
    const steps = play(env, [
      ...chopOnBoard('tomato'),
      'take the bowl',
      'put the tomato in the bowl',
      'serve the dish',
    ]);
    expect(steps.map((s) => s.info.primitiveSteps)).toEqual([2, 5, 3, 9, 9, 3]);
    const printed = [-0.00199, -0.004901, 0.19305, -0.008648, -0.008648, 0.97713];
    steps.forEach((s, i) => {
      expectRounded(s.reward, printed[i] as number, 6);
    });
    // The chop label persists after chopping.
    expect(steps[2]?.actions?.[4]).toBe('chop the tomato');
    expect(steps[3]?.actions).toEqual([
      'put the tomato in the bowl',
      'take the bowl',
      'put the bowl on the cutting board',
      'serve the dish',
      'chop nothing',
    ]);
    for (const s of steps.slice(0, 5)) expect(s.terminated || s.truncated).toBe(false);
    const last = steps[5];
    expect(last?.terminated).toBe(true);
    expect(last?.truncated).toBe(false);
    expectRounded(last?.info.discountedReturn as number, 0.89563, 5);
    expect(last?.info.length).toBe(31);
    expect(last?.info.macroSteps).toBe(6);
    expect(last?.info.success).toBe(true);
  });

  it('O-1: labels after each macro follow what is held and where the agent stands', () => {
    const { env } = fresh('tomato-salad');
    const [s1, s2] = play(env, ['pick up the tomato', 'put the tomato on the cutting board']);
    expect(s1?.actions).toEqual([
      'pick up the tomato',
      'take the bowl',
      'put the tomato on the cutting board',
      'serve the dish',
      'chop nothing',
    ]);
    expect(s2?.actions).toEqual([
      'pick up the tomato',
      'take the bowl',
      'walk to the cutting board',
      'serve nothing',
      'chop the tomato',
    ]);
  });

  it('O-2: the optimal 28-step sequence', () => {
    const { env } = fresh('tomato-salad');
    const steps = play(env, OPTIMAL_TOMATO_SALAD);
    expect(steps.map((s) => s.info.primitiveSteps)).toEqual([2, 5, 3, 1, 10, 7]);
    // Holding a chopped tomato leaves the board label unchanged.
    expect(steps[3]?.actions?.[2]).toBe('walk to the cutting board');
    const last = steps[5];
    expect(last?.terminated).toBe(true);
    expectRounded(last?.info.discountedReturn as number, 0.92052, 5);
    expect(last?.info.length).toBe(28);
  });

  it('O-5: 200 x chop nothing ends at the 200th macro', () => {
    const { env } = fresh('tomato-salad');
    let last = env.stepSync('chop nothing');
    for (let i = 1; i < 200; i++) {
      expect(last.terminated || last.truncated).toBe(false);
      expect(last.info.primitiveSteps).toBe(1);
      expectRounded(last.reward, -0.001, 9);
      last = env.stepSync('chop nothing');
    }
    expect(last.truncated).toBe(true);
    expect(last.terminated).toBe(false);
    expectRounded(last.info.discountedReturn as number, -0.0866, 5);
    expect(last.info.length).toBe(200);
    expect(last.info.macroSteps).toBe(200);
  });

  it('O-5: 198 x chop nothing then take bowl overruns to 204 primitive steps', () => {
    const { env } = fresh('tomato-salad');
    for (let i = 0; i < 198; i++) env.stepSync('chop nothing');
    const last = env.stepSync('take the bowl');
    expect(last.info.primitiveSteps).toBe(6);
    expect(last.truncated).toBe(true);
    expect(last.info.length).toBe(204);
  });
});
