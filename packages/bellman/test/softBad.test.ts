import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionGae } from '../src/actionGae.js';
import { poad } from '../src/presets.js';
import { softBad } from '../src/softBad.js';
import { RUNS, segmentArb, unit } from './arbitraries.js';
import { itRefuses, type RefusalCase, validSegment } from './segment-errors.js';

const close = (a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-12) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    const scale = Math.max(1, Math.abs(b[i] as number));
    expect(Math.abs((a[i] as number) - (b[i] as number)) / scale, `index ${i}`).toBeLessThan(tol);
  }
};

describe('softBad by hand (two actions of 2 and 3 tokens)', () => {
  // Tokens 0, 1 are action 0 (reward 0.5); tokens 2, 3, 4 are action 1 (reward 1).
  // values[k] is the soft value before token k; bootstrapValue the one after action 1.
  const base = {
    rewards: [0.5, 1],
    tokenCounts: [2, 3],
    values: [0.2, 0.4, 0.7, -0.1, 0.3],
    bootstrapValue: 0.6,
  };

  it('no done: inner tokens read the next value, last tokens add r + γ·V(next)', () => {
    const y = softBad({ ...base, dones: [false, false] }, { gamma: 0.9 });
    // y0 = values[1] = 0.4            (inner)
    // y1 = 0.5 + 0.9·values[2] = 1.13 (last of action 0: the next action's first value)
    // y2 = values[3] = -0.1           (inner)
    // y3 = values[4] = 0.3            (inner)
    // y4 = 1 + 0.9·0.6 = 1.54         (last of action 1: the bootstrap value)
    close(y, [0.4, 1.13, -0.1, 0.3, 1.54]);
  });

  it('a done after action 0 cuts its bootstrap; the next action is unaffected', () => {
    const y = softBad({ ...base, dones: [true, false] }, { gamma: 0.9 });
    close(y, [0.4, 0.5, -0.1, 0.3, 1.54]);
  });

  it('a done after the last action ignores the bootstrap value, even a NaN one', () => {
    const y = softBad(
      { ...base, dones: [false, true], bootstrapValue: Number.NaN },
      { gamma: 0.9 },
    );
    close(y, [0.4, 1.13, -0.1, 0.3, 1]);
  });

  it('γ = 1 and γ = 0', () => {
    close(softBad({ ...base, dones: [0, 0] }, { gamma: 1 }), [0.4, 1.2, -0.1, 0.3, 1.6]);
    close(softBad({ ...base, dones: [0, 0] }, { gamma: 0 }), [0.4, 0.5, -0.1, 0.3, 1]);
  });

  it('soft values that carry a KL term pass it on unchanged (no β in the backup)', () => {
    // One 2-token action, then the bootstrap. Before token 1 the policy is π = (0.8, 0.2) over
    // two tokens with Q̄ = (1, 0), the reference is uniform and β = 0.1:
    // KL = 0.8·ln 1.6 + 0.2·ln 0.4 = 0.192744757, V = 0.8 − 0.1·KL = 0.7807255243.
    const kl = 0.8 * Math.log(1.6) + 0.2 * Math.log(0.4);
    expect(kl).toBeCloseTo(0.192744757, 9);
    const v1 = 0.8 - 0.1 * kl;
    const y = softBad(
      { rewards: [0], dones: [false], tokenCounts: [2], values: [0.5, v1], bootstrapValue: 2 },
      { gamma: 0.5 },
    );
    close(y, [0.7807255243, 1], 1e-10);
  });

  it('an empty segment gives an empty array', () => {
    const y = softBad(
      { rewards: [], dones: [], tokenCounts: [], values: [], bootstrapValue: 0 },
      { gamma: 0.9 },
    );
    expect(y).toBeInstanceOf(Float64Array);
    expect(y.length).toBe(0);
  });
});

describe('properties of softBad on random segments', () => {
  it('is the one-step BAD target: POAD returns with λ = 0 on the same values', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, gamma) => {
        close(softBad(seg, { gamma }), poad(seg, { gamma, lambda: 0 }).returns);
      }),
      RUNS,
    );
  });

  it('one-token actions: the action-level one-step target (actionGae returns with λ = 0)', () => {
    fc.assert(
      fc.property(segmentArb({ maxTokens: 1 }), unit, (seg, gamma) => {
        close(softBad(seg, { gamma }), actionGae(seg, { gamma, lambda: 0 }).returns);
      }),
      RUNS,
    );
  });

  it('each target depends only on its own action and the value right after it', () => {
    fc.assert(
      fc.property(segmentArb({ minT: 1 }), unit, (seg, gamma) => {
        const y = softBad(seg, { gamma });
        let start = 0;
        seg.tokenCounts.forEach((n, t) => {
          const end = start + n;
          for (let k = start; k < end - 1; k++) expect(y[k]).toBe(seg.values[k + 1]);
          const next = t + 1 < seg.rewards.length ? seg.values[end]! : seg.bootstrapValue;
          const r = seg.rewards[t]!;
          expect(y[end - 1]).toBe(seg.dones[t] ? r : r + gamma * next);
          // Telescoping along the action: Σ_k (y_k − V_k) = y_last − V(o_t).
          let sum = 0;
          for (let k = start; k < end; k++) sum += y[k]! - seg.values[k]!;
          expect(Math.abs(sum - (y[end - 1]! - seg.values[start]!))).toBeLessThan(1e-12 * n * 10);
          start = end;
        });
      }),
      RUNS,
    );
  });

  it('writes into `out` and gives the same numbers', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, gamma) => {
        const out = new Float64Array(seg.values.length + 3).fill(7);
        const res = softBad(seg, { gamma }, out);
        expect(res).toBe(out);
        expect(Array.from(out.subarray(0, seg.values.length))).toEqual(
          Array.from(softBad(seg, { gamma })),
        );
        expect(Array.from(out.subarray(seg.values.length))).toEqual([7, 7, 7]);
      }),
      { numRuns: 200 },
    );
  });

  it('accepts typed arrays and 0/1 dones', () => {
    const y = softBad(
      {
        rewards: Float32Array.of(0.5, 1),
        dones: Uint8Array.of(0, 1),
        tokenCounts: Int32Array.of(2, 3),
        values: Float64Array.of(0.25, 0.5, 0.75, -0.25, 0.125),
        bootstrapValue: Number.NaN,
      },
      { gamma: 0.5 },
    );
    close(y, [0.5, 0.875, -0.25, 0.125, 1]);
  });
});

describe('softBad rejects bad input with a typed error naming the field', () => {
  const base = validSegment;
  const opts = { gamma: 0.95 };
  const cases: RefusalCase[] = [
    ['segment null', () => softBad(null as never, opts), TypeError, /softBad: `segment`/],
    ['options null', () => softBad(base(), null as never), TypeError, /softBad: `options`/],
    ['gamma missing', () => softBad(base(), {} as never), TypeError, /options\.gamma/],
    ['gamma NaN', () => softBad(base(), { gamma: Number.NaN }), TypeError, /options\.gamma/],
    ['gamma > 1', () => softBad(base(), { gamma: 1.01 }), RangeError, /options\.gamma.*\[0, 1\]/],
    ['gamma < 0', () => softBad(base(), { gamma: -0.1 }), RangeError, /options\.gamma/],
    [
      'rewards length',
      () => softBad({ ...base(), rewards: [0] }, opts),
      RangeError,
      /softBad: `segment\.dones`/,
    ],
    [
      'NaN bootstrap without a final done',
      () => softBad({ ...base(), dones: [false, false], bootstrapValue: Number.NaN }, opts),
      RangeError,
      /segment\.bootstrapValue/,
    ],
    [
      'out not a Float64Array',
      () => softBad(base(), opts, [0, 0, 0] as never),
      TypeError,
      /`out` must be a Float64Array/,
    ],
    [
      'out too short',
      () => softBad(base(), opts, new Float64Array(2)),
      RangeError,
      /`out`.*at least 3/,
    ],
  ];
  itRefuses(cases, (segment) => softBad(segment, opts));

  it('valid random input never throws and gives finite targets', () => {
    fc.assert(
      fc.property(segmentArb({ maxT: 12, maxTokens: 8 }), unit, (seg, gamma) => {
        const y = softBad(seg, { gamma });
        expect(y.length).toBe(seg.values.length);
        for (const x of y) expect(Number.isFinite(x)).toBe(true);
      }),
      RUNS,
    );
  });
});
