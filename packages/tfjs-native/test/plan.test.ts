import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MatMulShapeError, planMatMul } from '../src/index.js';

/** Index of the matrix of an input with batch dims `dims` used by output matrix `t`. */
function naiveIndex(dims: number[], out: number[], t: number): number {
  const pad = [...new Array<number>(out.length - dims.length).fill(1), ...dims];
  let rem = t;
  let idx = 0;
  let stride = 1;
  for (let ax = out.length - 1; ax >= 0; ax--) {
    const i = rem % out[ax]!;
    rem = Math.floor(rem / out[ax]!);
    idx += (pad[ax] === 1 ? 0 : i) * stride;
    stride *= pad[ax]!;
  }
  return idx;
}

/** Broadcast-compatible batch dims: suffixes of one output shape with some axes set to 1. */
const batchPairArb = fc
  .record({
    out: fc.array(fc.constantFrom<number>(2, 3), { minLength: 0, maxLength: 3 }),
    aDrop: fc.nat(3),
    bDrop: fc.nat(3),
    aOnes: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    bOnes: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  })
  .map(({ out, aDrop, bDrop, aOnes, bOnes }) => {
    const a = out.slice(Math.min(aDrop, out.length)).map((d, i) => (aOnes[i] ? 1 : d));
    const b = out
      .slice(bDrop % 2 === 0 ? 0 : Math.min(bDrop, out.length))
      .map((d, i) => (bOnes[i] ? 1 : d));
    return { a, b };
  });

describe('planMatMul', () => {
  it('maps every output matrix to the broadcast input matrices', () => {
    fc.assert(
      fc.property(batchPairArb, fc.boolean(), ({ a: aDims, b: bDims }, tA) => {
        const plan = planMatMul([...aDims, ...(tA ? [3, 2] : [2, 3])], [...bDims, 3, 4], tA, false);
        const out = plan.outShape.slice(0, -2);
        expect(plan.outShape.slice(-2)).toEqual([2, 4]);
        const total = out.reduce((p, d) => p * d, 1);
        if (plan.collapsed) {
          expect(plan.m).toBe(2 * total);
          expect(tA).toBe(false);
          expect(bDims.reduce((p, d) => p * d, 1)).toBe(1);
          return;
        }
        expect(plan.batch).toBe(total);
        for (let t = 0; t < total; t++) {
          const ai = plan.aIndex ? plan.aIndex[t]! : plan.aBatch === 1 ? 0 : t;
          const bi = plan.bIndex ? plan.bIndex[t]! : plan.bBatch === 1 ? 0 : t;
          expect(ai).toBe(naiveIndex(aDims, out, t));
          expect(bi).toBe(naiveIndex(bDims, out, t));
        }
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('reads m, n, k through the transposes', () => {
    const p = planMatMul([5, 3], [7, 5], true, true);
    expect([p.m, p.n, p.k]).toEqual([3, 7, 5]);
    expect(p.outShape).toEqual([3, 7]);
  });

  it('collapses a stack of matrices times one matrix into one taller product', () => {
    const p = planMatMul([4, 6, 8], [8, 5], false, false);
    expect(p).toMatchObject({ collapsed: true, batch: 1, m: 24, n: 5, k: 8 });
    expect(p.outShape).toEqual([4, 6, 5]);
    expect(planMatMul([4, 8, 6], [8, 5], true, false).collapsed).toBe(false);
  });

  it('uses explicit indices only for general broadcasts', () => {
    const p = planMatMul([2, 1, 3, 4], [1, 3, 4, 5], false, false);
    expect(p.outShape).toEqual([2, 3, 3, 5]);
    expect(Array.from(p.aIndex!)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(Array.from(p.bIndex!)).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('rejects bad shapes with errors naming them', () => {
    expect(() => planMatMul([3], [3, 2], false, false)).toThrow(MatMulShapeError);
    expect(() => planMatMul([2, 3], [4, 2], false, false)).toThrow(/\[2,3\].*\[4,2\]/);
    expect(() => planMatMul([2, 2, 3], [3, 3, 4], false, false)).toThrow(/do not broadcast/);
  });
});
