// The exact values of every task against numbers computed by hand (the arithmetic is in the
// comments). γ = 0.95 throughout unless said otherwise.
import { describe, expect, it } from 'vitest';
import { CreditArgumentError } from '../src/errors.js';
import { optimalReturn, optimalValues } from '../src/optimal.js';
import { outcomeCredit } from '../src/outcome-credit.js';
import { advantageOf, policyAdvantages } from '../src/policy.js';
import { type LabelPolicy, uniformPolicy } from '../src/policy-input.js';

/** Expects every entry of `got` to equal `want` to 12 decimals (and no other keys). */
function expectValues(got: Readonly<Record<string, number>>, want: Record<string, number>): void {
  expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
  for (const [k, v] of Object.entries(want)) expect(got[k], k).toBeCloseTo(v, 12);
}

const CUP = (a: string) => `put the ${a} cup on the shelf`;
const LONG_CUP = (a: string) => `pick up the ${a} cup from the table and put it on the shelf`;
const FILLERS = ['walk down the hallway', 'walk on'] as const;
const TAKE = 'take the milk from the fridge';
const LOOK = 'look in the fridge';
const WALK = 'walk to the next room';
const RUN = 'run to the living room';
const both = (x: number) => ({ [FILLERS[0]]: x, [FILLERS[1]]: x });

describe('Q* and V*', () => {
  it('key-token: the clean cup is worth 1, the others 0', () => {
    const o = optimalValues('key-token');
    expect(o.converged).toBe(true);
    expectValues(o.q.table!, { [CUP('dirty')]: 0, [CUP('clean')]: 1, [CUP('full')]: 0 });
    expectValues(o.v, { table: 1, success: 0, failure: 0 });
    expect(o.optimal).toEqual({ table: [CUP('clean')] });
    const long = optimalValues('key-token-long');
    expect(long.q.table![LONG_CUP('clean')]).toBe(1);
    expect(long.q.table![LONG_CUP('warm')]).toBe(0);
    expect(long.optimal.table).toEqual([LONG_CUP('clean')]);
  });

  it('delayed: Q*(bread-k) = γ^(k−1); Q*(kitchen, bread) = γ^4 = 0.81450625 > Q*(chips) = 0.3', () => {
    const o = optimalValues('delayed');
    // The last filler step from bread-1 gives +1: Q* = 1. Each earlier one discounts once:
    // bread-2 0.95, bread-3 0.9025, bread-4 0.857375.
    expectValues(o.q['bread-1']!, both(1));
    expectValues(o.q['bread-2']!, both(0.95));
    expectValues(o.q['bread-3']!, both(0.9025));
    expectValues(o.q['bread-4']!, both(0.857375));
    // grab the bread: 0 + 0.95 · 0.857375 = 0.81450625; grab the chips: 0.3 + 0.95 · 0 = 0.3.
    expectValues(o.q.kitchen!, { 'grab the bread': 0.81450625, 'grab the chips': 0.3 });
    for (let k = 1; k <= 4; k++) expectValues(o.q[`chips-${k}`]!, both(0));
    expect(o.optimal.kitchen).toEqual(['grab the bread']);
    expect(o.optimal['bread-3']).toEqual([...FILLERS]); // both fillers are optimal
    // D = 12: 0.95^12 = 0.540360087662636…, still above the lure's 0.3.
    const long = optimalValues('delayed-long');
    expect(long.q.kitchen!['grab the bread']).toBeCloseTo(0.540360087662636, 12);
    expect(long.q.kitchen!['grab the chips']).toBeCloseTo(0.3, 12);
  });

  it('loop: taking the milk is worth 1, looking in the fridge γ·1 = 0.95', () => {
    const o = optimalValues('loop');
    // kitchen: take → 1; look → 0 + 0.95 · V*(kitchen) = 0.95 · 1.
    expectValues(o.q.kitchen!, { [TAKE]: 1, [LOOK]: 0.95 });
    // hallway: kitchen → 0.95 · 1 = 0.95; bathroom → 0.
    expectValues(o.q.hallway!, { 'walk to the kitchen': 0.95, 'walk to the bathroom': 0 });
    expect(o.optimal).toEqual({ hallway: ['walk to the kitchen'], kitchen: [TAKE] });
    const long = optimalValues('loop-long');
    // dining room 0.95, living room 0.95² = 0.9025, hallway 0.95³ = 0.857375.
    expectValues(long.v, {
      hallway: 0.857375,
      'living-room': 0.9025,
      'dining-room': 0.95,
      kitchen: 1,
      success: 0,
      failure: 0,
    });
    expectValues(long.q.kitchen!, { [TAKE]: 1, [LOOK]: 0.95 });
  });

  it('risky: walking is worth γ^(k−1), running ½·1 + ½·0 = 0.5 everywhere', () => {
    const o = optimalValues('risky');
    expectValues(o.q['soup-1']!, { [WALK]: 1, [RUN]: 0.5 });
    expectValues(o.q['soup-2']!, { [WALK]: 0.95, [RUN]: 0.5 });
    expectValues(o.q['soup-3']!, { [WALK]: 0.9025, [RUN]: 0.5 });
    const long = optimalValues('risky-long');
    // 0.95^7 = 0.698337296093750 at eight rooms: the smallest margin over running, 0.198.
    expect(long.q['soup-8']![WALK]).toBeCloseTo(0.69833729609375, 12);
    expect(long.q['soup-8']![RUN]).toBeCloseTo(0.5, 12);
    for (let k = 1; k <= 8; k++) expect(long.optimal[`soup-${k}`]).toEqual([WALK]);
  });

  it('optimalReturn is V* of the start state, the logged return of an optimal episode', () => {
    expect(optimalReturn('key-token')).toBeCloseTo(1, 12);
    expect(optimalReturn('key-token-long')).toBeCloseTo(1, 12);
    expect(optimalReturn('delayed')).toBeCloseTo(0.95 ** 4, 12);
    expect(optimalReturn('delayed-long')).toBeCloseTo(0.95 ** 12, 12);
    expect(optimalReturn('loop')).toBeCloseTo(0.95, 12);
    expect(optimalReturn('loop-long')).toBeCloseTo(0.95 ** 3, 12);
    expect(optimalReturn('risky')).toBeCloseTo(0.95 ** 2, 12);
    expect(optimalReturn('credit/risky-long')).toBeCloseTo(0.95 ** 7, 12);
  });

  it('takes another γ: with γ = 1 looking in the fridge is as good as taking the milk', () => {
    const o = optimalValues('loop', { gamma: 1 });
    expectValues(o.q.kitchen!, { [TAKE]: 1, [LOOK]: 1 });
    expect(o.optimal.kitchen).toEqual([TAKE, LOOK]);
  });
});

describe('V^π, Q^π and A^π (exact linear solve)', () => {
  it('key-token, uniform: V^π = 1/3, A^π = 2/3 for the clean cup, −1/3 for the others', () => {
    const p = policyAdvantages('key-token', uniformPolicy);
    expect(p.v.table).toBeCloseTo(1 / 3, 15);
    expectValues(p.advantage.table!, {
      [CUP('dirty')]: -1 / 3,
      [CUP('clean')]: 2 / 3,
      [CUP('full')]: -1 / 3,
    });
    // Four labels: V^π = 1/4, A^π = 3/4 and −1/4.
    const long = policyAdvantages('key-token-long', uniformPolicy);
    expect(long.advantage.table![LONG_CUP('clean')]).toBeCloseTo(0.75, 15);
    expect(long.advantage.table![LONG_CUP('full')]).toBeCloseTo(-0.25, 15);
  });

  it('delayed, uniform: the fillers have A^π = 0; the bread +0.257253125', () => {
    const p = policyAdvantages('delayed', uniformPolicy);
    // The fillers do not change anything, so V^π(bread-k) = V*(bread-k) and A^π = 0.
    for (let k = 1; k <= 4; k++) {
      expectValues(p.advantage[`bread-${k}`]!, both(0));
      expectValues(p.advantage[`chips-${k}`]!, both(0));
    }
    // V^π(kitchen) = ½·0.81450625 + ½·0.3 = 0.557253125; A^π = ±0.257253125.
    expect(p.v.kitchen).toBeCloseTo(0.557253125, 14);
    expectValues(p.advantage.kitchen!, {
      'grab the bread': 0.257253125,
      'grab the chips': -0.257253125,
    });
    // D = 12: ½·(0.540360087662636 − 0.3) = 0.120180043831318.
    const long = policyAdvantages('delayed-long', uniformPolicy);
    expect(long.advantage.kitchen!['grab the bread']).toBeCloseTo(0.120180043831318, 12);
  });

  it('loop, uniform: V^π(kitchen) = 0.5/(1 − 0.475) = 20/21; A^π(look) = −1/21', () => {
    const p = policyAdvantages('loop', uniformPolicy);
    // V(k) = ½·1 + ½·0.95·V(k)  ⇒  V(k) = 0.5/0.525 = 20/21.
    expect(p.v.kitchen).toBeCloseTo(20 / 21, 15);
    // Q(look) = 0.95·20/21 = 19/21; A = 19/21 − 20/21 = −1/21; A(take) = 1 − 20/21 = 1/21.
    expectValues(p.q.kitchen!, { [TAKE]: 1, [LOOK]: 19 / 21 });
    expectValues(p.advantage.kitchen!, { [TAKE]: 1 / 21, [LOOK]: -1 / 21 });
    // V(hallway) = ½·(0.95·20/21) + ½·0 = 19/42; A = ±19/42.
    expect(p.v.hallway).toBeCloseTo(19 / 42, 15);
    expectValues(p.advantage.hallway!, {
      'walk to the kitchen': 19 / 42,
      'walk to the bathroom': -19 / 42,
    });
  });

  it('loop, looking 80% of the time: V(kitchen) = 0.2/(1 − 0.76) = 5/6, A^π(look) = −1/24', () => {
    const pi: LabelPolicy = (state) =>
      state === 'kitchen' ? { [TAKE]: 0.2, [LOOK]: 0.8 } : { 'walk to the kitchen': 1 };
    const p = policyAdvantages('loop', pi);
    // V(k) = 0.2·1 + 0.8·0.95·V(k)  ⇒  V(k) = 0.2/0.24 = 5/6.
    expect(p.v.kitchen).toBeCloseTo(5 / 6, 15);
    // A(look) = 0.95·5/6 − 5/6 = −0.05·5/6 = −1/24; A(take) = 1 − 5/6 = 1/6.
    expectValues(p.advantage.kitchen!, { [TAKE]: 1 / 6, [LOOK]: -1 / 24 });
    // A label the policy never takes still has a value: the bathroom gives 0, so
    // A = 0 − V(hallway) = −0.95·5/6 = −0.791666…
    expect(p.advantage.hallway!['walk to the bathroom']).toBeCloseTo(-0.95 * (5 / 6), 15);
    expect(p.policy.hallway).toEqual({ 'walk to the kitchen': 1, 'walk to the bathroom': 0 });
    expect(advantageOf(p, 'kitchen', LOOK)).toBeCloseTo(-1 / 24, 15);
  });

  it('risky, uniform: V(soup-1) = 0.75, V(soup-2) = 0.60625, V(soup-3) = 0.53796875', () => {
    const p = policyAdvantages('risky', uniformPolicy);
    // V1 = ½·1 + ½·0.5 = 0.75
    // V2 = ½·0.95·0.75 + ½·0.5 = 0.35625 + 0.25 = 0.60625
    // V3 = ½·0.95·0.60625 + ½·0.5 = 0.2879687… + 0.25 = 0.53796875
    expectValues(p.v, {
      'soup-1': 0.75,
      'soup-2': 0.60625,
      'soup-3': 0.53796875,
      success: 0,
      failure: 0,
    });
    // A(soup-3, walk) = 0.95·0.60625 − 0.53796875 = 0.5759375 − 0.53796875 = 0.03796875.
    expectValues(p.advantage['soup-3']!, { [WALK]: 0.03796875, [RUN]: -0.03796875 });
    expectValues(p.advantage['soup-1']!, { [WALK]: 0.25, [RUN]: -0.25 });
  });

  it('risky-long, uniform: far from the friend running is the better label under π', () => {
    // Under the uniform policy the walk's future keeps running half of the time, so its value
    // tends to γ·V with V → 0.5·0.5/(1 − 0.475) = 0.476…, below running's 0.5: A^π is
    // relative to the policy that acts, and here it disagrees with Q*.
    const p = policyAdvantages('risky-long', uniformPolicy);
    expect(p.advantage['soup-8']![WALK]).toBeLessThan(0);
    expect(p.advantage['soup-5']![WALK]).toBeLessThan(0);
    expect(p.advantage['soup-4']![WALK]).toBeGreaterThan(0);
    expect(optimalValues('risky-long').optimal['soup-8']).toEqual([WALK]);
  });

  it('with γ = 1 a policy that never leaves the loop has no values: a typed error', () => {
    const stuck: LabelPolicy = (state) =>
      state === 'kitchen' ? { [LOOK]: 1 } : { 'walk to the kitchen': 1 };
    expect(() => policyAdvantages('loop', stuck, { gamma: 1 })).toThrow(CreditArgumentError);
    expect(() => policyAdvantages('loop', stuck, { gamma: 1 })).toThrow(/"kitchen"/);
    // With γ < 1 it does: V(kitchen) = 0, and taking the milk has A = 1.
    expect(policyAdvantages('loop', stuck).advantage.kitchen![TAKE]).toBeCloseTo(1, 15);
    // And γ = 1 with a way out is fine: V(kitchen) = 1 under the uniform policy.
    expect(policyAdvantages('loop', uniformPolicy, { gamma: 1 }).v.kitchen).toBeCloseTo(1, 14);
  });
});

describe('outcome-only credit (exact)', () => {
  it('loop, uniform: E[R] = 1/2; every kitchen label gets +1/2, the loop included', () => {
    const c = outcomeCredit('loop', uniformPolicy);
    expect(c.meanReturn).toBeCloseTo(0.5, 14);
    // Visits: hallway once; kitchen d = ½ + ½·d ⇒ d = 1.
    expectValues(c.visits, { hallway: 1, kitchen: 1, success: 0, failure: 0 });
    // Every episode in the kitchen succeeds: 1 − 1/2 for both labels there.
    expectValues(c.credit.kitchen!, { [TAKE]: 0.5, [LOOK]: 0.5 });
    expectValues(c.credit.hallway!, { 'walk to the kitchen': 0.5, 'walk to the bathroom': -0.5 });
  });

  it('loop-long, uniform: E[R] = 1/8; the loop gets 1 − 1/8 = 7/8', () => {
    const c = outcomeCredit('loop-long', uniformPolicy);
    expect(c.meanReturn).toBeCloseTo(1 / 8, 14);
    expectValues(c.credit.kitchen!, { [TAKE]: 7 / 8, [LOOK]: 7 / 8 });
    // From the living room half the episodes reach the kitchen: 1/2 − 1/8 = 3/8.
    expect(c.credit['living-room']!['walk to the dining room']).toBeCloseTo(3 / 8, 14);
    expect(c.credit.hallway!['walk to the living room']).toBeCloseTo(1 / 8, 14);
  });

  it('delayed, uniform: E[R] = ½·1 + ½·0.3 = 0.65; fillers ±0.35 through the reward before them', () => {
    const c = outcomeCredit('delayed', uniformPolicy);
    expect(c.meanReturn).toBeCloseTo(0.65, 14);
    expectValues(c.credit.kitchen!, { 'grab the bread': 0.35, 'grab the chips': -0.35 });
    // After the bread: R = 0 before + 1 after = 1, so 1 − 0.65. After the chips: the 0.3
    // collected before the filler, nothing after: 0.3 − 0.65.
    for (let k = 1; k <= 4; k++) {
      expectValues(c.credit[`bread-${k}`]!, both(0.35));
      expectValues(c.credit[`chips-${k}`]!, both(-0.35));
    }
  });

  it('risky, uniform (undiscounted): U(soup-1) = 0.75, U(soup-2) = 0.625, E[R] = 0.5625', () => {
    const c = outcomeCredit('risky', uniformPolicy);
    // U1 = ½·1 + ½·0.5 = 0.75; U2 = ½·0.75 + ½·0.5 = 0.625; U3 = ½·0.625 + 0.25 = 0.5625.
    expect(c.meanReturn).toBeCloseTo(0.5625, 14);
    expectValues(c.credit['soup-3']!, { [WALK]: 0.0625, [RUN]: -0.0625 });
    expectValues(c.credit['soup-1']!, { [WALK]: 0.4375, [RUN]: -0.0625 });
    // Visits: soup-3 once, soup-2 half the time, soup-1 a quarter.
    expectValues(c.visits, { 'soup-3': 1, 'soup-2': 0.5, 'soup-1': 0.25, success: 0, failure: 0 });
  });

  it('is NaN for a state the policy never visits', () => {
    const pi: LabelPolicy = (s) =>
      s === 'hallway' ? { 'walk to the bathroom': 1 } : { [TAKE]: 1 };
    const c = outcomeCredit('loop', pi);
    expect(c.visits.kitchen).toBe(0);
    expect(c.credit.kitchen![TAKE]).toBeNaN();
    expect(c.credit.hallway!['walk to the bathroom']).toBeCloseTo(0, 14);
  });
});
