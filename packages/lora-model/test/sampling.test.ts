import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../src/rng.js';
import { logSoftmaxAt, sampleAmong, sampleToken, topIndices } from '../src/sampling.js';

const logitsArb = fc.array(fc.float({ min: -20, max: 20, noNaN: true, noDefaultInfinity: true }), {
  minLength: 1,
  maxLength: 40,
});

describe('seeded generator', () => {
  it('is deterministic per seed and stays in [0, 1)', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const a = new SeededRng(seed);
        const b = new SeededRng(seed);
        for (let i = 0; i < 20; i++) {
          const x = a.next();
          expect(x).toBe(b.next());
          expect(x >= 0 && x < 1).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('has a roughly uniform mean and unit-variance normals', () => {
    const r = new SeededRng(5);
    let s = 0;
    let s2 = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      s += r.next();
      const z = r.normal();
      s2 += z * z;
    }
    expect(Math.abs(s / n - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.05);
  });
});

/** The fully sorted order: larger logit first, ties by smaller index. */
function sortedOrder(logits: readonly number[]): number[] {
  const idx = logits.map((_, i) => i);
  return idx.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
}

describe('top-k selection', () => {
  it('equals the first k of the full sort, ties included', () => {
    // Small integers make ties common; long arrays take the selection path (k < n / 4).
    const tied = fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 300 });
    fc.assert(
      fc.property(tied, fc.integer({ min: 1, max: 300 }), (logits, k) => {
        const kk = Math.min(k, logits.length);
        expect(topIndices(logits, kk)).toEqual(sortedOrder(logits).slice(0, kk));
      }),
      { numRuns: 300 },
    );
  });

  it('draws the same tokens as sampling from the fully sorted vocabulary', () => {
    // The reference draws among the first k of the fully sorted order (no pre-selection).
    const reference = (logits: number[], topK: number, t: number, topP: number, rng: SeededRng) =>
      sampleAmong(
        logits,
        sortedOrder(logits).slice(0, Math.min(topK, logits.length)),
        t,
        topP,
        rng,
      );
    const vocab = fc.array(fc.float({ min: -20, max: 20, noNaN: true, noDefaultInfinity: true }), {
      minLength: 40,
      maxLength: 400,
    });
    fc.assert(
      fc.property(
        vocab,
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0.1, max: 2, noNaN: true }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.integer(),
        (logits, topK, temperature, topP, seed) => {
          const got = sampleToken(logits, { topK, temperature, topP }, new SeededRng(seed));
          expect(got).toEqual(reference(logits, topK, temperature, topP, new SeededRng(seed)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('sampling', () => {
  it('top-k keeps only the k most likely ids; k = 1 and temperature 0 are argmax', () => {
    fc.assert(
      fc.property(logitsArb, fc.integer({ min: 1, max: 10 }), fc.integer(), (logits, k, seed) => {
        const rng = new SeededRng(seed);
        const { token, samplerLogProb } = sampleToken(logits, { topK: k, temperature: 0.8 }, rng);
        const larger = logits.filter((x) => x > (logits[token] as number)).length;
        expect(larger).toBeLessThan(k);
        expect(samplerLogProb).toBeLessThanOrEqual(1e-12);
        const arg = logits.indexOf(Math.max(...logits));
        expect(sampleToken(logits, { temperature: 0 }, rng).token).toBe(arg);
        expect(sampleToken(logits, { topK: 1 }, rng).token).toBe(arg);
      }),
      { numRuns: 200 },
    );
  });

  it('top-p keeps the smallest prefix reaching p', () => {
    fc.assert(
      fc.property(
        logitsArb,
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.integer(),
        (logits, p, seed) => {
          const { token } = sampleToken(logits, { topP: p }, new SeededRng(seed));
          const m = Math.max(...logits);
          const probs = logits.map((x) => Math.exp(x - m));
          const z = probs.reduce((a, b) => a + b, 0);
          // Mass strictly above the sampled token must be below p (else it would have been cut).
          const above =
            probs.filter((q) => q > (probs[token] as number)).reduce((a, b) => a + b, 0) / z;
          expect(above).toBeLessThan(p + 1e-9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('log-softmax normalises', () => {
    fc.assert(
      fc.property(logitsArb, (logits) => {
        const total = logits.reduce((a, _, i) => a + Math.exp(logSoftmaxAt(logits, i)), 0);
        expect(Math.abs(total - 1)).toBeLessThan(1e-9);
      }),
      { numRuns: 200 },
    );
  });

  it('sample frequencies follow the softmax', () => {
    const logits = [0, 1, 2, -1];
    const rng = new SeededRng(3);
    const counts = [0, 0, 0, 0];
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const t = sampleToken(logits, {}, rng).token;
      counts[t] = (counts[t] as number) + 1;
    }
    logits.forEach((_, i) => {
      expect(Math.abs((counts[i] as number) / n - Math.exp(logSoftmaxAt(logits, i)))).toBeLessThan(
        0.015,
      );
    });
  });
});
