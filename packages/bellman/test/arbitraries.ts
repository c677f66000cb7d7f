import fc from 'fast-check';

export interface Seg {
  rewards: number[];
  dones: boolean[];
  tokenCounts: number[];
  values: number[];
  bootstrapValue: number;
}

const num = fc.double({ min: -5, max: 5, noNaN: true, noDefaultInfinity: true });

/** A random valid token segment with up to `maxT` actions of up to `maxTokens` tokens. */
export function segmentArb(opts: { maxT?: number; maxTokens?: number; minT?: number } = {}) {
  const { maxT = 10, maxTokens = 6, minT = 0 } = opts;
  return fc
    .array(
      fc.record({
        reward: num,
        done: fc.boolean(),
        count: fc.integer({ min: 1, max: maxTokens }),
      }),
      { minLength: minT, maxLength: maxT },
    )
    .chain((steps) =>
      fc.record({
        steps: fc.constant(steps),
        values: fc.array(num, {
          minLength: steps.reduce((s, x) => s + x.count, 0),
          maxLength: steps.reduce((s, x) => s + x.count, 0),
        }),
        bootstrapValue: num,
      }),
    )
    .map(
      ({ steps, values, bootstrapValue }): Seg => ({
        rewards: steps.map((s) => s.reward),
        dones: steps.map((s) => s.done),
        tokenCounts: steps.map((s) => s.count),
        values,
        bootstrapValue,
      }),
    );
}

export const unit = fc.double({ min: 0, max: 1, noNaN: true });
export const RUNS = { numRuns: 300 };
