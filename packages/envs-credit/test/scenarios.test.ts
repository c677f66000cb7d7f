// Fixed label sequences on every task: the labels offered after each step, the rewards,
// termination, truncation, the state ids and the end-of-episode info.
import {
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  type TextStep,
} from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createCreditEnv } from '../src/env.js';
import { CREDIT_TASKS } from '../src/tasks.js';

/** Plays `labels` from a reset with `seed`; returns the reset step and every step after it. */
function play(task: string, labels: readonly string[], seed = 0): TextStep[] {
  const env = createCreditEnv(task);
  const steps = [env.resetSync({ seed })];
  for (const label of labels) steps.push(env.stepSync(label));
  return steps;
}

const states = (steps: TextStep[]) => steps.map((s) => s.info.state);
const rewards = (steps: TextStep[]) => steps.slice(1).map((s) => s.reward);
const last = (steps: TextStep[]) => steps[steps.length - 1]!;

const CUP = (a: string) => `put the ${a} cup on the shelf`;
const LONG_CUP = (a: string) => `pick up the ${a} cup from the table and put it on the shelf`;
const FILLERS = ['walk down the hallway', 'walk on'];
const WALK = 'walk to the next room';
const RUN = 'run to the living room';

describe('every task', () => {
  it.each(CREDIT_TASKS)(
    '%s: running observations end with the cue; reset gives reward 0',
    (task) => {
      const env = createCreditEnv(task);
      const first = env.resetSync();
      expect(first).toMatchObject({ reward: 0, terminated: false, truncated: false });
      expect(first.observation).toMatch(/ Your next step is to$/);
      for (const st of env.mdp.states) {
        if (!st.terminal) expect(st.observation.endsWith('Your next step is to')).toBe(true);
        else expect(st.observation).not.toMatch(/next step/);
      }
    },
  );
});

describe('credit/key-token', () => {
  it('offers three labels that differ only in the third word', () => {
    const [start] = play('key-token', []);
    expect(start!.actions).toEqual([CUP('dirty'), CUP('clean'), CUP('full')]);
    expect(start!.info).toEqual({ state: 'table' });
    expect(start!.observation).toBe(
      'You are in the kitchen. There is a dirty cup, a clean cup and a full cup on the table. Only the clean cup goes on the shelf. Your next step is to',
    );
  });

  it('the clean cup succeeds: +1, terminated, return 1, length 1', () => {
    const steps = play('key-token', [CUP('clean')]);
    expect(states(steps)).toEqual(['table', 'success']);
    expect(last(steps)).toMatchObject({
      reward: 1,
      terminated: true,
      truncated: false,
      actions: [],
    });
    expect(last(steps).info).toEqual({
      state: 'success',
      discountedReturn: 1,
      length: 1,
      success: true,
    });
  });

  it.each(['dirty', 'full'])('the %s cup fails: 0, terminated', (adjective) => {
    const steps = play('key-token', [CUP(adjective)]);
    expect(states(steps)).toEqual(['table', 'failure']);
    expect(last(steps)).toMatchObject({ reward: 0, terminated: true, truncated: false });
    expect(last(steps).info).toMatchObject({ discountedReturn: 0, length: 1, success: false });
  });

  it('the long variant: four fourteen-word labels, the key word fourth', () => {
    const [start] = play('key-token-long', []);
    expect(start!.actions).toEqual(['dirty', 'full', 'clean', 'warm'].map(LONG_CUP));
    for (const label of start!.actions!) expect(label.split(' ')).toHaveLength(14);
    expect(last(play('key-token-long', [LONG_CUP('clean')]))).toMatchObject({
      reward: 1,
      terminated: true,
      info: { state: 'success', success: true },
    });
    expect(last(play('key-token-long', [LONG_CUP('warm')]))).toMatchObject({
      reward: 0,
      terminated: true,
      info: { state: 'failure', success: false },
    });
  });
});

describe('credit/delayed', () => {
  it('the bread, then 4 filler turns: +1 at step 5, return 0.95^4', () => {
    const steps = play('delayed', [
      'grab the bread',
      'walk on',
      'walk down the hallway',
      'walk on',
      'walk on',
    ]);
    expect(states(steps)).toEqual([
      'kitchen',
      'bread-4',
      'bread-3',
      'bread-2',
      'bread-1',
      'success',
    ]);
    expect(rewards(steps)).toEqual([0, 0, 0, 0, 1]);
    expect(steps[0]!.actions).toEqual(['grab the bread', 'grab the chips']);
    for (const s of steps.slice(1, -1)) {
      expect(s.actions).toEqual(FILLERS);
      expect(s.terminated || s.truncated).toBe(false);
    }
    expect(steps[1]!.observation).toContain('holding the bread');
    expect(steps[1]!.observation).toContain('The bedroom is 4 steps away.');
    expect(steps[4]!.observation).toContain('The bedroom is 1 step away.');
    expect(last(steps)).toMatchObject({ terminated: true, truncated: false });
    // 0.95^4 = 0.81450625
    expect(last(steps).info.discountedReturn).toBeCloseTo(0.81450625, 14);
    expect(last(steps).info).toMatchObject({ length: 5, success: true });
  });

  it('the chips: +0.3 at once, then nothing; return 0.3, a failure', () => {
    const steps = play('delayed', ['grab the chips', ...FILLERS, ...FILLERS]);
    expect(states(steps)).toEqual([
      'kitchen',
      'chips-4',
      'chips-3',
      'chips-2',
      'chips-1',
      'failure',
    ]);
    expect(rewards(steps)).toEqual([0.3, 0, 0, 0, 0]);
    expect(steps[1]!.observation).toContain('holding the chips');
    expect(last(steps)).toMatchObject({ terminated: true, truncated: false });
    expect(last(steps).info).toMatchObject({ discountedReturn: 0.3, length: 5, success: false });
  });

  it('the long variant has 12 filler turns: return 0.95^12 after 13 steps', () => {
    const steps = play('delayed-long', ['grab the bread', ...Array(12).fill('walk on')]);
    expect(states(steps).slice(1, 3)).toEqual(['bread-12', 'bread-11']);
    expect(last(steps)).toMatchObject({ reward: 1, terminated: true });
    // 0.95^12 = 0.540360087662636...
    expect(last(steps).info.discountedReturn).toBeCloseTo(0.95 ** 12, 14);
    expect(last(steps).info.length).toBe(13);
  });
});

describe('credit/loop', () => {
  it('hallway → kitchen → take the milk: +1 at step 2, return 0.95', () => {
    const steps = play('loop', ['walk to the kitchen', 'take the milk from the fridge']);
    expect(states(steps)).toEqual(['hallway', 'kitchen', 'success']);
    expect(steps[0]!.actions).toEqual(['walk to the kitchen', 'walk to the bathroom']);
    expect(steps[1]!.actions).toEqual(['take the milk from the fridge', 'look in the fridge']);
    expect(rewards(steps)).toEqual([0, 1]);
    expect(last(steps).info).toMatchObject({ discountedReturn: 0.95, length: 2, success: true });
  });

  it('looking in the fridge changes nothing: same state, same text, one discount more', () => {
    const steps = play('loop', [
      'walk to the kitchen',
      'look in the fridge',
      'look in the fridge',
      'take the milk from the fridge',
    ]);
    expect(states(steps)).toEqual(['hallway', 'kitchen', 'kitchen', 'kitchen', 'success']);
    expect(steps[2]!.observation).toBe(steps[1]!.observation);
    expect(steps[2]!.actions).toEqual(steps[1]!.actions);
    expect(rewards(steps)).toEqual([0, 0, 0, 1]);
    // 0.95^3 = 0.857375
    expect(last(steps).info.discountedReturn).toBeCloseTo(0.857375, 14);
  });

  it('the bathroom ends the episode with 0', () => {
    const steps = play('loop', ['walk to the bathroom']);
    expect(last(steps)).toMatchObject({ reward: 0, terminated: true, info: { state: 'failure' } });
  });

  it('looping until the step limit truncates the episode at 12 steps', () => {
    const steps = play('loop', ['walk to the kitchen', ...Array(11).fill('look in the fridge')]);
    expect(last(steps)).toMatchObject({ reward: 0, terminated: false, truncated: true });
    expect(last(steps).info).toEqual({
      state: 'kitchen',
      discountedReturn: 0,
      length: 12,
      success: false,
    });
    expect(last(steps).actions).toEqual(['take the milk from the fridge', 'look in the fridge']);
  });

  it('the long variant walks through three rooms first: return 0.95^3', () => {
    const steps = play('loop-long', [
      'walk to the living room',
      'walk to the dining room',
      'walk to the kitchen',
      'take the milk from the fridge',
    ]);
    expect(states(steps)).toEqual(['hallway', 'living-room', 'dining-room', 'kitchen', 'success']);
    expect(steps[1]!.actions).toEqual(['walk to the dining room', 'walk to the bedroom']);
    expect(steps[2]!.actions).toEqual(['walk to the kitchen', 'walk to the bathroom']);
    expect(steps[2]!.observation).toContain('The kitchen is the next room.');
    expect(last(steps).info.discountedReturn).toBeCloseTo(0.857375, 14);
    const wrong = play('loop-long', ['walk to the living room', 'walk to the bedroom']);
    expect(last(wrong)).toMatchObject({ terminated: true, info: { state: 'failure', length: 2 } });
  });
});

describe('credit/risky', () => {
  it('walking three rooms: +1 at step 3, return 0.95^2', () => {
    const steps = play('risky', [WALK, WALK, WALK]);
    expect(states(steps)).toEqual(['soup-3', 'soup-2', 'soup-1', 'success']);
    for (const s of steps.slice(0, 3)) expect(s.actions).toEqual([WALK, RUN]);
    expect(steps[0]!.observation).toContain('3 rooms away');
    expect(steps[2]!.observation).toContain('1 room away');
    expect(rewards(steps)).toEqual([0, 0, 1]);
    expect(last(steps).info).toMatchObject({ discountedReturn: 0.9025, length: 3, success: true });
  });

  it('running ends at once: +1 or 0 by the reset seed, the same for the same seed', () => {
    const outcomes = new Map<string, number>();
    for (let seed = 0; seed < 200; seed++) {
      const end = last(play('risky', [RUN], seed));
      expect(end.terminated).toBe(true);
      expect(end.info.length).toBe(1);
      expect(end.reward).toBe(end.info.state === 'success' ? 1 : 0);
      expect(end.info.success).toBe(end.info.state === 'success');
      expect(last(play('risky', [RUN], seed))).toEqual(end);
      const key = end.info.state as string;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    // Both outcomes happen; 200 fair coin flips land within 60..140 heads with probability
    // 1 − 2e-8, and the seeds are fixed, so this never flakes.
    expect(outcomes.get('success')).toBeGreaterThan(60);
    expect(outcomes.get('failure')).toBeGreaterThan(60);
  });

  it('the long variant is 8 rooms: return 0.95^7 after 8 steps', () => {
    const steps = play('risky-long', Array(8).fill(WALK));
    expect(steps[0]!.info.state).toBe('soup-8');
    expect(last(steps).info.discountedReturn).toBeCloseTo(0.95 ** 7, 14);
    expect(last(steps).info.length).toBe(8);
  });
});

describe('the TextEnv contract', () => {
  it('throws NotResetError, InvalidActionError (listing the labels) and EpisodeOverError', async () => {
    const env = createCreditEnv('credit/loop');
    await expect(env.step('walk to the kitchen')).rejects.toBeInstanceOf(NotResetError);
    await env.reset();
    const err = await env.step('look in the fridge').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidActionError);
    expect((err as InvalidActionError).validActions).toEqual([
      'walk to the kitchen',
      'walk to the bathroom',
    ]);
    expect((await env.step('walk to the bathroom')).terminated).toBe(true);
    await expect(env.step('walk to the kitchen')).rejects.toBeInstanceOf(EpisodeOverError);
    await env.close();
    await env.close();
  });

  it('a reset forgets the previous episode', async () => {
    const env = createCreditEnv('delayed');
    await env.reset();
    await env.step('grab the chips');
    const again = await env.reset({ seed: 5 });
    expect(again.info).toEqual({ state: 'kitchen' });
    expect((await env.step('grab the bread')).info.state).toBe('bread-4');
  });
});
