import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextTokenSets, PolicyContractError, restrictedLogProbs } from '../src/index.js';

/** Distinct candidates over a small alphabet with no candidate a prefix of another. */
const candidateSets = fc
  .uniqueArray(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 5 }), {
    minLength: 1,
    maxLength: 8,
    selector: (x) => x.join(','),
  })
  .map((rows) =>
    rows.filter(
      (a, i) =>
        !rows.some((b, j) => j !== i && b.length > a.length && a.every((t, k) => b[k] === t)),
    ),
  )
  .filter((rows) => rows.length > 0)
  .map((rows) => rows.map((r) => Int32Array.from(r)));

/**
 * Per-token log-probs of a language model over the whole alphabet {1..6} (tokens 5 and 6 start
 * no label: mass the restricted policy must drop), a function of (prefix, token) as a real
 * model's would be.
 */
function lmLogProbs(cands: readonly Int32Array[], seed: number): Float64Array[] {
  const logit = (prefix: readonly number[], t: number) => {
    let h = seed;
    for (const x of [...prefix, t]) h = Math.imul(h ^ (x * 2654435761), 0x85ebca6b) >>> 0;
    return ((h % 1000) / 1000) * 6 - 3;
  };
  return cands.map((c) =>
    Float64Array.from(c, (t, k) => {
      const prefix = Array.from(c.subarray(0, k));
      let z = 0;
      for (let v = 1; v <= 6; v++) z += Math.exp(logit(prefix, v));
      return logit(prefix, t) - Math.log(z);
    }),
  );
}

const prefixKey = (c: Int32Array, k: number) => Array.from(c.subarray(0, k)).join(',');

describe('label-tree token space', () => {
  it('next-token sets are the distinct continuations of the prefix, own token first (property)', () => {
    fc.assert(
      fc.property(candidateSets, (cands) => {
        const sets = nextTokenSets(cands);
        cands.forEach((c, i) => {
          expect(sets[i]).toHaveLength(c.length);
          c.forEach((t, k) => {
            const s = Array.from(sets[i]![k]!);
            expect(s[0]).toBe(t);
            const brute = new Set(
              cands
                .filter((o) => o.length > k && prefixKey(o, k) === prefixKey(c, k))
                .map((o) => o[k]),
            );
            expect(new Set(s)).toEqual(brute);
            expect(s).toHaveLength(brute.size);
          });
        });
      }),
    );
  });

  it('label probabilities from restricted token log-probs sum to 1 (property)', () => {
    fc.assert(
      fc.property(candidateSets, fc.integer({ min: 1, max: 1e6 }), (cands, seed) => {
        const lp = restrictedLogProbs(cands, lmLogProbs(cands, seed));
        let total = 0;
        for (const row of lp) total += Math.exp(row.reduce((a, v) => a + v, 0));
        expect(total).toBeCloseTo(1, 10);
      }),
    );
  });

  it('a token without siblings has log-prob exactly 0; restriction equals the LM where no mass leaks', () => {
    const cands = [Int32Array.of(1, 2, 3), Int32Array.of(1, 4, 3), Int32Array.of(2, 2)];
    // An LM that puts all of its mass on the tree's continuations: restriction changes nothing.
    const l = Math.log;
    const lm = [
      Float64Array.of(l(0.7), l(0.4), 0),
      Float64Array.of(l(0.7), l(0.6), 0),
      Float64Array.of(l(0.3), 0),
    ];
    const lp = restrictedLogProbs(cands, lm);
    lp.forEach((row, i) => {
      row.forEach((v, k) => {
        expect(v).toBeCloseTo(lm[i]![k]!, 12);
      });
    });
    expect(lp[0]![2]).toBe(0);
    expect(lp[2]![1]).toBe(0);
    // Half of the mass leaks to tokens outside the tree: the restricted values double it back.
    const leaky = lm.map((row) => row.map((v, k) => (k === 0 ? v + Math.log(0.5) : v)));
    const r = restrictedLogProbs(cands, leaky);
    expect(Math.exp(r[0]![0]!)).toBeCloseTo(0.7, 12);
    expect(Math.exp(r[2]![0]!)).toBeCloseTo(0.3, 12);
  });

  it('is invariant to a constant added to every continuation of one prefix (property)', () => {
    fc.assert(
      fc.property(
        candidateSets,
        fc.integer({ min: 1, max: 1e6 }),
        fc.double({ min: -5, max: 5, noNaN: true }),
        (cands, seed, shift) => {
          const lm = lmLogProbs(cands, seed);
          const target = prefixKey(cands[0]!, 0);
          const shifted = lm.map((row, i) =>
            row.map((v, k) => (k === 0 && prefixKey(cands[i]!, 0) === target ? v + shift : v)),
          );
          const a = restrictedLogProbs(cands, lm);
          const b = restrictedLogProbs(cands, shifted);
          a.forEach((row, i) => {
            row.forEach((v, k) => {
              expect(b[i]![k]!).toBeCloseTo(v, 9);
            });
          });
        },
      ),
    );
  });

  it('refuses duplicate ids and a label that is a prefix of another, naming the fix', () => {
    expect(() => nextTokenSets([Int32Array.of(1, 2), Int32Array.of(1, 2)])).toThrow(
      PolicyContractError,
    );
    expect(() => nextTokenSets([Int32Array.of(1, 2), Int32Array.of(1, 2, 3)])).toThrow(
      /prefix of candidate 1's.*tokenSpace 'vocabulary'/,
    );
  });
});
