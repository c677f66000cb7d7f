// Bad input gets a typed error that names the argument and says what is expected.
import { EnvArgumentError } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import { createCreditEnv } from '../src/env.js';
import { CreditArgumentError } from '../src/errors.js';
import type { CreditMdp } from '../src/mdp.js';
import { optimalValues } from '../src/optimal.js';
import { outcomeCredit } from '../src/outcome-credit.js';
import { advantageOf, policyAdvantages } from '../src/policy.js';
import { uniformPolicy } from '../src/policy-input.js';
import { creditMdp, isCreditTask } from '../src/tasks.js';
import { creditTokenMdp } from '../src/token-mdp.js';

const tiny = (patch: Partial<CreditMdp> = {}): CreditMdp => ({
  id: 'credit/tiny',
  gamma: 0.9,
  start: 'a',
  maxSteps: 3,
  states: [
    {
      id: 'a',
      observation: 'Start. Your next step is to',
      terminal: false,
      success: false,
      actions: [{ label: 'finish', outcomes: [{ state: 'end', prob: 1, reward: 1 }] }],
    },
    { id: 'end', observation: 'Done.', terminal: true, success: true, actions: [] },
  ],
  ...patch,
});

describe('errors', () => {
  it('an unknown task lists the tasks', () => {
    expect(isCreditTask('loop')).toBe(true);
    expect(isCreditTask('credit/loop')).toBe(false);
    expect(() => creditMdp('lop')).toThrow(CreditArgumentError);
    // An environment package's argument error (an InputError of @poad/config).
    expect(() => creditMdp('lop')).toThrow(EnvArgumentError);
    expect(() => creditMdp('lop')).toThrow(
      expect.objectContaining({ name: 'CreditArgumentError', argument: 'creditMdp(task)' }),
    );
    expect(() => creditMdp('lop')).toThrow(
      /creditMdp\(task\): unknown credit task "lop"; the tasks are key-token, key-token-long, delayed/,
    );
    expect(() => policyAdvantages('credit/nope', uniformPolicy)).toThrow(
      /policyAdvantages\(task\)/,
    );
    expect(() => createCreditEnv('nope')).toThrow(/createCreditEnv\(task\)/);
  });

  it('a policy that is not a distribution over the labels', () => {
    expect(() => policyAdvantages('loop', () => [1])).toThrow(
      /policyAdvantages\(pi\): π\(·\|"hallway"\) has 1 probabilities for 2 labels/,
    );
    expect(() => policyAdvantages('loop', () => [0.5, 0.6])).toThrow(/sums to 1\.1/);
    expect(() => policyAdvantages('loop', () => [1.5, -0.5])).toThrow(/probability -0\.5/);
    expect(() => policyAdvantages('loop', () => ({ 'walk to the garden': 1 }))).toThrow(
      /names "walk to the garden", which is not a label here; the labels are "walk to the kitchen", "walk to the bathroom"/,
    );
    expect(() => outcomeCredit('loop', () => [Number.NaN, 1])).toThrow(CreditArgumentError);
    expect(() => policyAdvantages('loop', 'uniform' as never)).toThrow(/expected a function/);
    expect(() => policyAdvantages('loop', uniformPolicy, { gamma: 2 })).toThrow(
      /policyAdvantages\(options\.gamma\): expected a discount in \[0, 1\], got 2/,
    );
    expect(() => optimalValues('loop', { gamma: -1 })).toThrow(/optimalValues\(options\.gamma\)/);
    // Probabilities that sum to 1 within 1e-5 are divided by their sum.
    const p = policyAdvantages('loop', () => [0.499999, 0.5]);
    expect(
      p.policy.hallway!['walk to the kitchen']! + p.policy.hallway!['walk to the bathroom']!,
    ).toBeCloseTo(1, 15);
  });

  it('advantageOf names the states or labels that exist', () => {
    const p = policyAdvantages('loop', uniformPolicy);
    expect(() => advantageOf(p, 'garden', 'walk on')).toThrow(
      /advantageOf\(stateId\): credit\/loop has no state "garden"; its states are hallway, kitchen, success, failure/,
    );
    expect(() => advantageOf(p, 'kitchen', 'walk on')).toThrow(
      /has no label "walk on"; its labels are "take the milk from the fridge", "look in the fridge"/,
    );
    expect(() => advantageOf(p, 'success', 'walk on')).toThrow(/is terminal and has no labels/);
    expect(() => advantageOf(p, 'constructor', 'x')).toThrow(/no state "constructor"/);
  });

  it('a malformed MDP names the fault', () => {
    expect(policyAdvantages(tiny(), uniformPolicy).v.a).toBe(1);
    const bad = (patch: Partial<CreditMdp>) => () => optimalValues(tiny(patch));
    expect(bad({ start: 'x' })).toThrow(/start "x" is not the id of a state/);
    expect(bad({ gamma: 1.5 })).toThrow(/gamma must be a number in \[0, 1\]/);
    expect(bad({ maxSteps: 0 })).toThrow(/maxSteps must be a positive integer/);
    const states = tiny().states;
    expect(bad({ states: [states[0]!, states[0]!] })).toThrow(/state id "a" appears twice/);
    const withOutcome = (outcomes: CreditMdp['states'][number]['actions'][number]['outcomes']) =>
      bad({ states: [{ ...states[0]!, actions: [{ label: 'finish', outcomes }] }, states[1]!] });
    expect(withOutcome([{ state: 'end', prob: 0.5, reward: 1 }])).toThrow(
      /label "finish": outcome probabilities sum to 0\.5; they must sum to 1/,
    );
    expect(withOutcome([{ state: 'nowhere', prob: 1, reward: 1 }])).toThrow(
      /outcome state "nowhere" is unknown/,
    );
    expect(withOutcome([{ state: 'end', prob: 1, reward: Number.NaN }])).toThrow(
      /not a finite number/,
    );
    expect(bad({ states: [{ ...states[0]!, actions: [] }, states[1]!] })).toThrow(
      /is not terminal but offers no label/,
    );
    expect(
      bad({
        states: [
          {
            ...states[0]!,
            actions: [{ label: 'a, b', outcomes: [{ state: 'end', prob: 1, reward: 0 }] }],
          },
          states[1]!,
        ],
      }),
    ).toThrow(/contains a comma/);
  });

  it('env options and tokenizers are checked', () => {
    expect(() => createCreditEnv('loop', { maxSteps: 0 })).toThrow(EnvArgumentError);
    expect(() => creditTokenMdp('loop', () => [])).toThrow(
      /creditTokenMdp\(tokenize\): tokenize\("walk to the kitchen"\) must return a non-empty array/,
    );
  });
});
