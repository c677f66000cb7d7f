import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchTokenGae } from '../src/batchTokenGae.js';
import { tokenGae } from '../src/tokenGae.js';
import { segmentArb, unit } from './arbitraries.js';

describe('batchTokenGae', () => {
  it('equals tokenGae per segment, concatenated', () => {
    fc.assert(
      fc.property(
        fc.array(segmentArb(), { maxLength: 6 }),
        unit,
        unit,
        unit,
        (segs, gamma, lambda, intraGamma) => {
          const opts = { gamma, lambda, intraGamma };
          const batch = batchTokenGae(segs, opts);
          expect(batch.offsets.length).toBe(segs.length + 1);
          segs.forEach((seg, i) => {
            const one = tokenGae(seg, opts);
            const a = batch.advantages.subarray(batch.offsets[i]!, batch.offsets[i + 1]!);
            expect(Array.from(a)).toEqual(Array.from(one.advantages));
            const r = batch.returns.subarray(batch.offsets[i]!, batch.offsets[i + 1]!);
            expect(Array.from(r)).toEqual(Array.from(one.returns));
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
