import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CreditArgumentError, decidingToken } from '../src/index.js';

const ids = (...xs: number[]) => Int32Array.from(xs);

describe('decidingToken', () => {
  it('is the first token where the chosen label parts from every other', () => {
    // "put the dirty cup", "put the clean cup", "put the full cup": decided at the adjective.
    const cups = [ids(1, 2, 3, 9), ids(1, 2, 4, 9), ids(1, 2, 5, 9)];
    for (const k of [0, 1, 2]) expect(decidingToken(cups, k)).toBe(2);
    // "walk to the bathroom", "walk to the kitchen", "look in the fridge".
    const rooms = [ids(7, 8, 2, 10), ids(7, 8, 2, 11), ids(12, 13, 2, 14)];
    expect(decidingToken(rooms, 0)).toBe(3);
    expect(decidingToken(rooms, 1)).toBe(3);
    expect(decidingToken(rooms, 2)).toBe(0);
    // Labels parting at different places: "grab the bread" parts from "go" at once, from
    // "grab the chips" at the third token; the later one decides.
    const mixed = [ids(20, 2, 21), ids(20, 2, 22), ids(23)];
    expect(decidingToken(mixed, 0)).toBe(2);
    expect(decidingToken(mixed, 2)).toBe(0);
    // A single valid label is decided by its first token.
    expect(decidingToken([ids(5, 6)], 0)).toBe(0);
    // "walk on" is the beginning of "walk on the left": no token of it separates them.
    const prefix = [ids(7, 30), ids(7, 30, 2, 31)];
    expect(decidingToken(prefix, 0)).toBe(1);
    expect(decidingToken(prefix, 1)).toBe(2);
  });

  it('every other label shares the tokens before it and none shares the tokens up to it', () => {
    const label = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        fc.uniqueArray(label, {
          minLength: 1,
          maxLength: 6,
          selector: (l) => l.join(','),
        }),
        fc.nat(),
        (labels, pick) => {
          const k = pick % labels.length;
          const c = labels.map((l) => Int32Array.from(l));
          const p = decidingToken(c, k);
          const mine = labels[k]!;
          expect(p).toBeGreaterThanOrEqual(0);
          expect(p).toBeLessThan(mine.length);
          const others = labels.filter((_, j) => j !== k);
          const shares = (o: number[], n: number) =>
            o.length >= n && o.slice(0, n).every((x, i) => x === mine[i]);
          // Some other label shares the tokens before p (else p would be earlier).
          if (p > 0) expect(others.some((o) => shares(o, p))).toBe(true);
          // No other label shares the tokens up to p, unless the chosen one is the whole
          // beginning of another (then p is its last token).
          if (others.some((o) => shares(o, p + 1))) {
            expect(p).toBe(mine.length - 1);
            expect(others.some((o) => o.length > mine.length && shares(o, mine.length))).toBe(true);
          }
        },
      ),
      { seed: 43, numRuns: 500 },
    );
  });

  it('refuses an index that is not a candidate and a label without tokens', () => {
    expect(() => decidingToken([ids(1)], 1)).toThrow(CreditArgumentError);
    expect(() => decidingToken([ids(1)], 1)).toThrow(/an index of the 1 candidates, got 1/);
    expect(() => decidingToken([ids(1), ids()], 1)).toThrow(/the chosen label has no tokens/);
  });
});
