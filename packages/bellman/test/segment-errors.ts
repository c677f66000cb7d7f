import { expect, it } from 'vitest';
import type { TokenSegment } from '../src/types.js';

/** A valid two-action segment (2 and 1 tokens), the base every bad case below patches. */
export const validSegment = (): TokenSegment => ({
  rewards: [0, 1],
  dones: [false, true],
  tokenCounts: [2, 1],
  values: [0.1, 0.2, 0.3],
  bootstrapValue: 0.5,
});

/**
 * Segment fields that every function taking a token segment (`tokenGae`, `softBad`, …) refuses
 * the same way: [case, patch of {@link validSegment}, error type, message].
 */
export const BAD_SEGMENT_FIELDS: [string, Record<string, unknown>, ErrorConstructor, RegExp][] = [
  ['tokenCounts length', { tokenCounts: [3] }, RangeError, /segment\.tokenCounts/],
  ['values length', { values: [1, 2] }, RangeError, /segment\.values.*sum of tokenCounts/],
  ['tokenCount 0', { tokenCounts: [0, 3] }, RangeError, /tokenCounts\[0\].*at least one token/],
  ['tokenCount 1.5', { tokenCounts: [1.5, 1.5] }, TypeError, /tokenCounts\[0\].*integer/],
  ['NaN reward', { rewards: [Number.NaN, 1] }, RangeError, /segment\.rewards\[0\].*finite/],
  [
    'Infinity value',
    { values: [0, Number.POSITIVE_INFINITY, 0] },
    RangeError,
    /segment\.values\[1\]/,
  ],
  ['done = 2', { dones: [2, 0] }, TypeError, /segment\.dones\[0\]/],
  ['missing values', { values: undefined }, TypeError, /segment\.values/],
  ['string reward', { rewards: ['1', 0] }, TypeError, /segment\.rewards\[0\]/],
];

/** A refusal: [case, the call, error type, message]. */
export type RefusalCase = [string, () => unknown, ErrorConstructor, RegExp];

/**
 * One test per case that its call throws an error of its type whose message matches, for `cases`
 * and for every {@link BAD_SEGMENT_FIELDS} case, which `call` makes on the patched segment.
 */
export function itRefuses(
  cases: readonly RefusalCase[],
  call: (segment: TokenSegment) => unknown,
): void {
  const fields = BAD_SEGMENT_FIELDS.map(
    ([name, patch, type, message]): RefusalCase => [
      name,
      () => call({ ...validSegment(), ...patch } as never),
      type,
      message,
    ],
  );
  it.each([...cases, ...fields])('%s', (_name, fn, type, message) => {
    expect(fn).toThrow(type);
    expect(fn).toThrow(message);
  });
}
