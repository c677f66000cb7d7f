import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gigpoAdvantages } from '../src/gigpoAdvantages.js';
import { grpoAdvantages } from '../src/grpoAdvantages.js';
import type { GigpoTrajectory } from '../src/types.js';
import {
  EPS,
  expectWithin,
  groupTol,
  maxAbs,
  normaliseArb,
  RUNS,
  refNormalise,
  stats,
} from './groups.js';

const unit = fc.double({ min: 0, max: 1, noNaN: true });
const reward = fc.double({ min: -5, max: 5, noNaN: true });

/** A group of 1..6 episodes of 0..8 steps whose states come from `alphabet` (small: shared states). */
function groupArb(alphabet: readonly string[] = ['a', 'b', 'c', 'd', 'e']) {
  return fc.array(
    fc.array(fc.record({ state: fc.constantFrom(...alphabet), reward }), { maxLength: 8 }).map(
      (steps): GigpoTrajectory => ({
        states: steps.map((s) => s.state),
        rewards: steps.map((s) => s.reward),
      }),
    ),
    { minLength: 1, maxLength: 6 },
  );
}

/** G_t = r_t + γ·G_{t+1}, per episode. */
function discounted(rewards: ArrayLike<number>, gamma: number): number[] {
  const G = new Array<number>(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    g = (rewards[t] as number) + gamma * g;
    G[t] = g;
  }
  return G;
}

/**
 * GiGPO straight from the definitions: episode level by the textbook GRPO on Σ rewards, step level
 * by collecting every (i, t) of each state string and normalising that list.
 */
function reference(
  trajs: GigpoTrajectory[],
  gamma: number,
  omega: number,
  normalise: 'std' | 'none',
) {
  const sums = trajs.map((tr) => Array.from(tr.rewards).reduce((s, r) => s + r, 0));
  const episode = refNormalise(sums, normalise);
  const returns = trajs.map((tr) => discounted(tr.rewards, gamma));
  const members = new Map<string, [number, number][]>();
  trajs.forEach((tr, i) => {
    tr.states.forEach((s, t) => {
      members.set(s, [...(members.get(s) ?? []), [i, t]]);
    });
  });
  const step = trajs.map((tr) => new Array<number>(tr.states.length).fill(Number.NaN));
  const tol = trajs.map((tr) => new Array<number>(tr.states.length).fill(0));
  for (const list of members.values()) {
    const values = list.map(([i, t]) => returns[i]![t]!);
    const a = refNormalise(values, normalise);
    const bound = groupTol(values.length, maxAbs(values), stats(values).std, normalise);
    list.forEach(([i, t], k) => {
      step[i]![t] = a[k]!;
      tol[i]![t] = bound;
    });
  }
  const combined = step.map((row, i) => row.map((s) => episode[i]! + omega * s));
  // The sums themselves may round differently (we add from the first step, the function from the
  // last): by at most T·u·Σ|r| each, which the bound at magnitude (T + 1)·Σ|r| covers.
  const sumMag = Math.max(
    ...trajs.map(
      (tr) => (tr.rewards.length + 1) * Array.from(tr.rewards).reduce((s, r) => s + Math.abs(r), 0),
    ),
  );
  const episodeTol = 2 * groupTol(sums.length, sumMag, stats(sums).std, normalise);
  return { episode, step, combined, tol, episodeTol };
}

describe('gigpoAdvantages by hand', () => {
  // Three episodes from the same start, γ = 0.5:
  //   A: states s0 s1     rewards 0 1        R = 1    G = (0.5, 1)
  //   B: states s0 s2 s1  rewards 0 0 0.5    R = 0.5  G = (0.125, 0.25, 0.5)
  //   C: states s0 s3     rewards 0 0        R = 0    G = (0, 0)
  // (G_t = r_t + 0.5·G_{t+1}: B's G_1 = 0 + 0.5·0.5 = 0.25, G_0 = 0 + 0.5·0.25 = 0.125.)
  // Anchor groups: s0 = {A0, B0, C0}, s1 = {A1, B2} (at different step indices), s2 = {B1}, s3 = {C1}.
  const group: GigpoTrajectory[] = [
    { states: ['s0', 's1'], rewards: [0, 1] },
    { states: ['s0', 's2', 's1'], rewards: [0, 0, 0.5] },
    { states: ['s0', 's3'], rewards: [0, 0] },
  ];

  it("normalise 'none'", () => {
    const { episode, step, combined } = gigpoAdvantages(group, {
      gamma: 0.5,
      omega: 1,
      normalise: 'none',
    });
    // Episode: mean R = 1.5/3 = 0.5, A^E = (0.5, 0, −0.5).
    expectWithin(episode, [0.5, 0, -0.5], 1e-15);
    // s0: returns (0.5, 0.125, 0), mean 0.625/3 = 5/24: A^S = (12/24 − 5/24, 3/24 − 5/24, −5/24)
    //     = (7/24, −2/24, −5/24).
    // s1: returns (1, 0.5), mean 0.75: A^S = (0.25, −0.25).  s2, s3: alone, A^S = 0.
    expectWithin(step[0]!, [7 / 24, 0.25], 1e-15);
    expectWithin(step[1]!, [-2 / 24, 0, -0.25], 1e-15);
    expectWithin(step[2]!, [-5 / 24, 0], 1e-15);
    // Combined (ω = 1): A = (0.5 + 7/24, 0.5 + 0.25), (0 − 2/24, 0, 0 − 0.25), (−0.5 − 5/24, −0.5).
    expectWithin(combined[0]!, [19 / 24, 0.75], 1e-15);
    expectWithin(combined[1]!, [-2 / 24, 0, -0.25], 1e-15);
    expectWithin(combined[2]!, [-17 / 24, -0.5], 1e-15);
  });

  it("normalise 'std' (both levels)", () => {
    const { episode, step, combined } = gigpoAdvantages(group, {
      gamma: 0.5,
      omega: 1,
      normalise: 'std',
    });
    // Episode: std of (1, 0.5, 0) = √(1/6) = 0.4082482905; ±0.5/(0.4082482905 + 1e-6) = ±1.2247418714.
    expectWithin(episode, [1.2247418714, 0, -1.2247418714], 1e-10);
    // s0: deviations (7, −2, −5)/24, variance (49 + 4 + 25)/576/3 = 13/288, std = 0.2124591464,
    //     + ε = 0.2124601464: (7/24)/0.2124601464 = 1.3728064845, (−2/24)/… = −0.3922304241,
    //     (−5/24)/… = −0.9805760603.
    // s1: deviations ±0.25, std 0.25: ±0.25/(0.25 + 1e-6) = ±0.9999960000.  s2, s3: 0.
    const s0 = Math.sqrt(13 / 288) + EPS;
    expect(s0).toBeCloseTo(0.2124601464, 10);
    expectWithin(step[0]!, [1.3728064845, 0.999996], 1e-10);
    expectWithin(step[1]!, [-0.3922304241, 0, -0.999996], 1e-10);
    expectWithin(step[2]!, [-0.9805760603, 0], 1e-10);
    expectWithin(step[0]!, [7 / 24 / s0, 0.25 / 0.250001], 1e-15);
    // Combined (ω = 1): episode + step.
    expectWithin(combined[0]!, [1.2247418714 + 1.3728064845, 1.2247418714 + 0.999996], 1e-9);
    expectWithin(combined[1]!, [-0.3922304241, 0, -0.999996], 1e-9);
    expectWithin(combined[2]!, [-1.2247418714 - 0.9805760603, -1.2247418714], 1e-9);
  });

  it('a state visited twice in one episode counts once per visit', () => {
    // γ = 0.5. A: states a b a, rewards 0 0 1, R = 1, G = (0.25, 0.5, 1).
    //          B: states a c,   rewards 0 1,   R = 1, G = (0.5, 1).
    // Episode: equal returns, A^E = (0, 0).
    // Anchor a = {A0, A2, B0}: returns (0.25, 1, 0.5), mean 1.75/3 = 7/12,
    //   A^S = (3/12 − 7/12, 12/12 − 7/12, 6/12 − 7/12) = (−4/12, 5/12, −1/12).
    // b = {A1}, c = {B1}: alone, 0. Combined with ω = 0.5: (−2/12, 0, 2.5/12), (−0.5/12, 0).
    const { episode, step, combined } = gigpoAdvantages(
      [
        { states: ['a', 'b', 'a'], rewards: [0, 0, 1] },
        { states: ['a', 'c'], rewards: [0, 1] },
      ],
      { gamma: 0.5, omega: 0.5, normalise: 'none' },
    );
    expect(Array.from(episode)).toEqual([0, 0]);
    expectWithin(step[0]!, [-4 / 12, 0, 5 / 12], 1e-15);
    expectWithin(step[1]!, [-1 / 12, 0], 1e-15);
    expectWithin(combined[0]!, [-2 / 12, 0, 2.5 / 12], 1e-15);
    expectWithin(combined[1]!, [-0.5 / 12, 0], 1e-15);
  });

  it('γ = 0 compares single rewards, γ = 1 undiscounted rewards-to-go', () => {
    // Two episodes through states x then y; rewards (1, 2) and (3, 0).
    const g: GigpoTrajectory[] = [
      { states: ['x', 'y'], rewards: [1, 2] },
      { states: ['x', 'y'], rewards: [3, 0] },
    ];
    // γ = 0: x compares r = (1, 3) → (−1, 1); y compares (2, 0) → (1, −1).
    const zero = gigpoAdvantages(g, { gamma: 0, omega: 1, normalise: 'none' });
    expectWithin(zero.step[0]!, [-1, 1], 0);
    expectWithin(zero.step[1]!, [1, -1], 0);
    // γ = 1: x compares (3, 3) → 0; y compares (2, 0) → (1, −1). Episode returns are equal: 0.
    const one = gigpoAdvantages(g, { gamma: 1, omega: 1, normalise: 'none' });
    expectWithin(one.step[0]!, [0, 1], 0);
    expectWithin(one.step[1]!, [0, -1], 0);
    expectWithin(one.episode, [0, 0], 0);
  });

  it('a group of one episode: every advantage is 0 unless it revisits a state', () => {
    const lone = gigpoAdvantages([{ states: ['p', 'q'], rewards: [1, 2] }], {
      gamma: 0.9,
      omega: 1,
      normalise: 'std',
    });
    expect(Array.from(lone.episode)).toEqual([0]);
    expect(Array.from(lone.combined[0]!)).toEqual([0, 0]);
  });

  it('an episode with no steps has return 0 and empty step arrays', () => {
    // Returns (1, 0): mean 0.5, A^E = (0.5, −0.5).
    const r = gigpoAdvantages(
      [
        { states: ['a'], rewards: [1] },
        { states: [], rewards: [] },
      ],
      { gamma: 0.9, omega: 1, normalise: 'none' },
    );
    expectWithin(r.episode, [0.5, -0.5], 0);
    expect(r.step[1]!.length).toBe(0);
    expect(r.combined[1]!.length).toBe(0);
  });
});

/** Random groups with random γ, ω and normalisation, each checked by `check` (fast-check). */
function forAllGroups(
  check: (
    trajs: GigpoTrajectory[],
    gamma: number,
    omega: number,
    normalise: 'std' | 'none',
  ) => void,
): void {
  fc.assert(
    fc.property(groupArb(), unit, fc.double({ min: 0, max: 2, noNaN: true }), normaliseArb, check),
    RUNS,
  );
}

describe('properties of gigpoAdvantages', () => {
  it('equals the definitions computed plainly (anchor groups collected by state string)', () => {
    forAllGroups((trajs, gamma, omega, normalise) => {
      const out = gigpoAdvantages(trajs, { gamma, omega, normalise });
      const ref = reference(trajs, gamma, omega, normalise);
      expectWithin(out.episode, ref.episode, ref.episodeTol);
      expect(out.step.length).toBe(trajs.length);
      trajs.forEach((tr, i) => {
        expect(out.step[i]!.length).toBe(tr.states.length);
        tr.states.forEach((_, t) => {
          expectWithin([out.step[i]![t]!], [ref.step[i]![t]!], ref.tol[i]![t]!);
          expectWithin(
            [out.combined[i]![t]!],
            [ref.combined[i]![t]!],
            ref.episodeTol + omega * ref.tol[i]![t]! + 1e-15,
          );
        });
      });
    });
  });

  it('episode level is grpoAdvantages on the undiscounted returns; combined = episode + ω·step', () => {
    forAllGroups((trajs, gamma, omega, normalise) => {
      const out = gigpoAdvantages(trajs, { gamma, omega, normalise });
      const sums = trajs.map((tr) => Array.from(tr.rewards).reduce((s, r) => s + r, 0));
      // The sums may round differently (we add from the last step): the bound at their size.
      expectWithin(
        out.episode,
        grpoAdvantages(sums, { normalise }),
        2 * groupTol(sums.length, 8 * 5, stats(sums).std, normalise),
      );
      out.combined.forEach((row, i) => {
        row.forEach((c, t) => {
          expect(c).toBe(out.episode[i]! + omega * out.step[i]![t]!);
        });
      });
    });
  });

  it('every state distinct: step advantages are all 0 and combined = episode', () => {
    forAllGroups((trajs, gamma, omega, normalise) => {
      const distinct = trajs.map((tr, i) => ({
        ...tr,
        states: tr.states.map((s, t) => `${i}/${t}/${s}`),
      }));
      const out = gigpoAdvantages(distinct, { gamma, omega, normalise });
      out.step.forEach((row, i) => {
        row.forEach((s, t) => {
          expect(s === 0).toBe(true);
          expect(out.combined[i]![t]).toBe(out.episode[i]);
        });
      });
    });
  });

  it('identical state sequences: the step level is GRPO, step by step, on the discounted returns', () => {
    const sameLength = fc
      .integer({ min: 1, max: 8 })
      .chain((T) =>
        fc.array(fc.array(reward, { minLength: T, maxLength: T }), { minLength: 1, maxLength: 6 }),
      );
    fc.assert(
      fc.property(sameLength, unit, normaliseArb, (rewards, gamma, normalise) => {
        const T = rewards[0]!.length;
        const states = Array.from({ length: T }, (_, t) => `room ${t}`);
        const out = gigpoAdvantages(
          rewards.map((r) => ({ states, rewards: r })),
          { gamma, omega: 1, normalise },
        );
        const returns = rewards.map((r) => discounted(r, gamma));
        for (let t = 0; t < T; t++) {
          const column = returns.map((G) => G[t]!);
          const expected = grpoAdvantages(column, { normalise });
          const tol = groupTol(column.length, maxAbs(column), stats(column).std, normalise);
          expectWithin(
            out.step.map((row) => row[t]!),
            expected,
            tol,
          );
        }
      }),
      RUNS,
    );
  });

  it('ω = 0: combined = episode for every step', () => {
    fc.assert(
      fc.property(groupArb(), unit, normaliseArb, (trajs, gamma, normalise) => {
        const out = gigpoAdvantages(trajs, { gamma, omega: 0, normalise });
        out.combined.forEach((row, i) => {
          for (const c of row) expect(c).toBe(out.episode[i]! + 0);
        });
      }),
      RUNS,
    );
  });

  it('each anchor group’s step advantages sum to 0 (up to rounding)', () => {
    fc.assert(
      fc.property(groupArb(['a', 'b']), unit, normaliseArb, (trajs, gamma, normalise) => {
        const out = gigpoAdvantages(trajs, { gamma, omega: 1, normalise });
        const ref = reference(trajs, gamma, 1, normalise);
        for (const s of ['a', 'b']) {
          let sum = 0;
          let tol = 0;
          trajs.forEach((tr, i) => {
            tr.states.forEach((x, t) => {
              if (x !== s) return;
              sum += out.step[i]![t]!;
              tol += 2 * ref.tol[i]![t]! + 1e-15 * Math.abs(out.step[i]![t]!);
            });
          });
          expect(Math.abs(sum)).toBeLessThanOrEqual(tol);
        }
      }),
      RUNS,
    );
  });
});

describe('gigpoAdvantages refuses bad input with a typed error naming it', () => {
  const ok = (): GigpoTrajectory[] => [
    { states: ['a', 'b'], rewards: [0, 1] },
    { states: ['a'], rewards: [0] },
  ];
  const opts = { gamma: 0.95, omega: 1, normalise: 'std' as const };
  const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
    [
      'an empty group',
      () => gigpoAdvantages([], opts),
      RangeError,
      /`trajectories` has 0 entries, but a group needs at least one episode; e\.g\. gigpoAdvantages\(\[\{ states: \[/,
    ],
    [
      'trajectories not an array',
      () => gigpoAdvantages({} as never, opts),
      TypeError,
      /`trajectories` must be an array/,
    ],
    [
      'an episode that is not an object',
      () => gigpoAdvantages([ok()[0]!, null as never], opts),
      TypeError,
      /`trajectories\[1\]` must be an object \{ states, rewards \}/,
    ],
    [
      'missing states',
      () => gigpoAdvantages([{ rewards: [1] } as never], opts),
      TypeError,
      /`trajectories\[0\]\.states` must be an array/,
    ],
    [
      'missing rewards',
      () => gigpoAdvantages([{ states: ['a'] } as never], opts),
      TypeError,
      /`trajectories\[0\]\.rewards` must be an array/,
    ],
    [
      'states and rewards of different lengths',
      () => gigpoAdvantages([ok()[0]!, { states: ['a', 'b'], rewards: [0] }], opts),
      RangeError,
      /`trajectories\[1\]\.rewards` has length 1 but must have length 2 \(one reward per step, like states\)/,
    ],
    [
      'a state that is not a string',
      () => gigpoAdvantages([{ states: ['a', 3 as never], rewards: [0, 1] }], opts),
      TypeError,
      /`trajectories\[0\]\.states\[1\]` must be a string/,
    ],
    [
      'a NaN reward',
      () => gigpoAdvantages([ok()[0]!, { states: ['a'], rewards: [Number.NaN] }], opts),
      RangeError,
      /`trajectories\[1\]\.rewards\[0\]` must be finite/,
    ],
    [
      'an infinite reward',
      () => gigpoAdvantages([{ states: ['a'], rewards: [Number.POSITIVE_INFINITY] }], opts),
      RangeError,
      /`trajectories\[0\]\.rewards\[0\]` must be finite/,
    ],
    [
      'γ > 1',
      () => gigpoAdvantages(ok(), { ...opts, gamma: 1.5 }),
      RangeError,
      /`options\.gamma` must lie in \[0, 1\]/,
    ],
    [
      'γ < 0',
      () => gigpoAdvantages(ok(), { ...opts, gamma: -0.1 }),
      RangeError,
      /`options\.gamma` must lie in \[0, 1\]/,
    ],
    [
      'γ NaN',
      () => gigpoAdvantages(ok(), { ...opts, gamma: Number.NaN }),
      TypeError,
      /`options\.gamma`/,
    ],
    [
      'ω < 0',
      () => gigpoAdvantages(ok(), { ...opts, omega: -1 }),
      RangeError,
      /`options\.omega`.*>= 0/,
    ],
    [
      'ω infinite',
      () => gigpoAdvantages(ok(), { ...opts, omega: Number.POSITIVE_INFINITY }),
      RangeError,
      /`options\.omega` must be finite/,
    ],
    [
      'ω missing',
      () => gigpoAdvantages(ok(), { gamma: 0.9, normalise: 'std' } as never),
      TypeError,
      /`options\.omega` must be a number/,
    ],
    [
      'an unknown normalisation',
      () => gigpoAdvantages(ok(), { ...opts, normalise: 'episode' as never }),
      TypeError,
      /`options\.normalise` must be 'std'.*or 'none'.*got 'episode'/,
    ],
    [
      'no options',
      () => gigpoAdvantages(ok(), null as never),
      TypeError,
      /`options` must be an object like \{ gamma: 0\.95, omega: 1, normalise: 'std' \}/,
    ],
  ];
  for (const [name, fn, type, message] of cases) {
    it(name, () => {
      expect(fn).toThrow(type);
      expect(fn).toThrow(message);
    });
  }
});
