import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionGae } from '../src/actionGae.js';
import { batchTokenGae } from '../src/batchTokenGae.js';
import { tokenGae } from '../src/tokenGae.js';
import { RUNS, segmentArb, unit } from './arbitraries.js';
import { itRefuses, type RefusalCase, validSegment } from './segment-errors.js';

const base = validSegment;
const opts = { gamma: 0.95, lambda: 0.95 };

describe('bad input throws a typed error naming the field', () => {
  const cases: RefusalCase[] = [
    [
      'rewards length',
      () => tokenGae({ ...base(), rewards: [0] }, opts),
      RangeError,
      /segment\.dones/,
    ],
    [
      'dones length',
      () => tokenGae({ ...base(), dones: [false] }, opts),
      RangeError,
      /segment\.dones/,
    ],
    [
      '-Infinity bootstrap',
      () =>
        tokenGae(
          { ...base(), dones: [false, false], bootstrapValue: Number.NEGATIVE_INFINITY },
          opts,
        ),
      RangeError,
      /bootstrapValue/,
    ],
    [
      'NaN bootstrap',
      () => tokenGae({ ...base(), dones: [false, false], bootstrapValue: Number.NaN }, opts),
      RangeError,
      /bootstrapValue/,
    ],
    [
      'gamma > 1',
      () => tokenGae(base(), { gamma: 1.01, lambda: 0.9 }),
      RangeError,
      /options\.gamma/,
    ],
    [
      'gamma < 0',
      () => tokenGae(base(), { gamma: -0.1, lambda: 0.9 }),
      RangeError,
      /options\.gamma/,
    ],
    [
      'lambda NaN',
      () => tokenGae(base(), { gamma: 0.9, lambda: Number.NaN }),
      TypeError,
      /options\.lambda/,
    ],
    [
      'lambda > 1',
      () => tokenGae(base(), { gamma: 0.9, lambda: 2 }),
      RangeError,
      /options\.lambda/,
    ],
    [
      'intraGamma > 1',
      () => tokenGae(base(), { ...opts, intraGamma: 1.5 }),
      RangeError,
      /options\.intraGamma/,
    ],
    [
      'intraLambda < 0',
      () => tokenGae(base(), { ...opts, intraLambda: -0.1 }),
      RangeError,
      /options\.intraLambda/,
    ],
    [
      'bad bootstrap mode',
      () => tokenGae(base(), { ...opts, bootstrap: 'x' as never }),
      TypeError,
      /options\.bootstrap/,
    ],
    [
      'action values length',
      () => actionGae({ rewards: [1], dones: [true], values: [], bootstrapValue: 0 }, opts),
      RangeError,
      /segment\.values/,
    ],
    [
      'action lambda',
      () =>
        actionGae(
          { rewards: [1], dones: [true], values: [0], bootstrapValue: 0 },
          { gamma: 0.9, lambda: -1 },
        ),
      RangeError,
      /options\.lambda/,
    ],
    [
      'batch names the segment',
      () => batchTokenGae([base(), { ...base(), rewards: [Number.NaN, 0] }], opts),
      RangeError,
      /segments\[1\].*rewards\[0\]/,
    ],
  ];
  itRefuses(cases, (segment) => tokenGae(segment, opts));

  it('a done last action needs no finite bootstrap value', () => {
    expect(() => tokenGae({ ...base(), bootstrapValue: Number.NaN }, opts)).not.toThrow();
  });
});

describe('valid input never throws', () => {
  it('tokenGae over random segments and options', () => {
    fc.assert(
      fc.property(
        segmentArb({ maxT: 12, maxTokens: 8 }),
        unit,
        unit,
        unit,
        fc.constantFrom('next-first-token' as const, 'next-last-token' as const),
        (seg, gamma, lambda, intraGamma, bootstrap) => {
          const out = tokenGae(seg, { gamma, lambda, intraGamma, bootstrap });
          expect(out.advantages.length).toBe(seg.values.length);
          for (const x of out.advantages) expect(Number.isFinite(x)).toBe(true);
        },
      ),
      RUNS,
    );
  });
  it('actionGae over random segments', () => {
    fc.assert(
      fc.property(segmentArb({ maxTokens: 1 }), unit, unit, (seg, gamma, lambda) => {
        expect(() => actionGae(seg, { gamma, lambda })).not.toThrow();
      }),
      RUNS,
    );
  });
});
