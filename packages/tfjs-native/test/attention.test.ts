import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { attention, unregisterNativeKernels } from '../src/index.js';
import { describeNative, stockAndNative, useWasm, withNative, withStock } from './helpers.js';
import { dimArb, randomValues, seedArb, worstRatio } from './values.js';

const MASKED = -1e9;

/** One generated attention problem: sizes, inputs and an additive causal + padding mask. */
interface Case {
  batch: number;
  seq: number;
  heads: number;
  kvHeads: number;
  hd: number;
  scale: number | undefined;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  mask: Float32Array;
  seed: number;
}

/**
 * Sizes as the brief of the op: batch 1–3, seq 1–9, (heads, kvHeads) in {1/1, 2/1, 4/2, 4/4},
 * hd in {2, 4, 8}. The mask is causal with a random left padding per sequence (padded keys are
 * masked, so the padded query rows are fully masked), plus one more query row masked entirely.
 */
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    batch: dimArb(3),
    seq: dimArb(9),
    heads: fc.constantFrom<[number, number]>([1, 1], [2, 1], [4, 2], [4, 4]),
    hd: fc.constantFrom(2, 4, 8),
    scale: fc.option(fc.double({ min: 0.05, max: 2, noNaN: true }), { nil: undefined }),
    pads: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 3, maxLength: 3 }),
    blank: fc.nat(),
    causal: fc.boolean(),
    seed: seedArb,
  })
  .map(({ batch, seq, heads: [heads, kvHeads], hd, scale, pads, blank, causal, seed }) => {
    const rows = batch * seq;
    const mask = new Float32Array(batch * seq * seq);
    const blankRow = blank % rows;
    for (let b = 0; b < batch; b++) {
      const pad = Math.min(pads[b]!, seq);
      for (let t = 0; t < seq; t++) {
        for (let j = 0; j < seq; j++) {
          const hidden = (causal && j > t) || j < pad || b * seq + t === blankRow;
          mask[(b * seq + t) * seq + j] = hidden ? MASKED : 0;
        }
      }
    }
    return {
      batch,
      seq,
      heads,
      kvHeads,
      hd,
      scale,
      q: randomValues(rows * heads * hd, seed, 2),
      k: randomValues(rows * kvHeads * hd, seed + 1, 2),
      v: randomValues(rows * kvHeads * hd, seed + 2, 2),
      mask,
      seed,
    };
  });

/**
 * Plain loops over the definition, in float64 except for one rounding: the masked score
 * `score + mask` is rounded to float32 as both implementations do, so that a fully masked row
 * (all scores become exactly -1e9) gives the same uniform softmax.
 */
function referenceAttention(c: Case): Float64Array {
  const { batch, seq, heads, kvHeads, hd } = c;
  const scale = c.scale ?? 1 / Math.sqrt(hd);
  const group = heads / kvHeads;
  const out = new Float64Array(batch * seq * heads * hd);
  const w = new Float64Array(seq);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const g = Math.floor(h / group);
      for (let t = 0; t < seq; t++) {
        const qRow = (b * seq + t) * heads * hd + h * hd;
        let max = Number.NEGATIVE_INFINITY;
        for (let j = 0; j < seq; j++) {
          const kRow = (b * seq + j) * kvHeads * hd + g * hd;
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += c.q[qRow + i]! * c.k[kRow + i]!;
          const s = Math.fround(Math.fround(scale * dot) + c.mask[(b * seq + t) * seq + j]!);
          w[j] = s;
          max = Math.max(max, s);
        }
        let sum = 0;
        for (let j = 0; j < seq; j++) {
          w[j] = Math.exp(w[j]! - max);
          sum += w[j]!;
        }
        for (let i = 0; i < hd; i++) {
          let acc = 0;
          for (let j = 0; j < seq; j++) {
            acc += (w[j]! / sum) * c.v[(b * seq + j) * kvHeads * hd + g * hd + i]!;
          }
          out[qRow + i] = acc;
        }
      }
    }
  }
  return out;
}

interface Result {
  value: Float32Array;
  grads: Float32Array[];
}

/** Output of the op and the gradients of sum(out · w) w.r.t. q, k and v for a seeded w. */
function evaluate(c: Case): Result {
  return tf.tidy(() => {
    const rows = c.batch * c.seq;
    const q = tf.tensor2d(c.q, [rows, c.heads * c.hd]);
    const k = tf.tensor2d(c.k, [rows, c.kvHeads * c.hd]);
    const v = tf.tensor2d(c.v, [rows, c.kvHeads * c.hd]);
    const mask = tf.tensor3d(c.mask, [c.batch, c.seq, c.seq]);
    const opts = { batch: c.batch, heads: c.heads, kvHeads: c.kvHeads, scale: c.scale };
    const value = attention(q, k, v, mask, opts).dataSync().slice() as Float32Array;
    const weight = tf.tensor2d(randomValues(rows * c.heads * c.hd, c.seed + 3), [
      rows,
      c.heads * c.hd,
    ]);
    const g = tf.grads((qi: tf.Tensor, ki: tf.Tensor, vi: tf.Tensor) =>
      tf.sum(
        tf.mul(
          attention(qi as tf.Tensor2D, ki as tf.Tensor2D, vi as tf.Tensor2D, mask, opts),
          weight,
        ),
      ),
    );
    const grads = g([q, k, v]).map((t) => t.dataSync().slice() as Float32Array);
    return { value, grads };
  });
}

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  const ratio = worstRatio(actual, expected, 1e-5, 5e-5);
  expect(ratio, `${what}: worst error ratio ${ratio}`).toBeLessThanOrEqual(1);
}

function usedKernels(fn: () => void): Promise<string[]> {
  return tf.profile(fn).then((info) => info.kernels.map((k) => k.name));
}

/** Small fixed inputs for the non-property tests: batch 2, seq 5, 4 heads over 2 kv heads. */
function fixedInputs() {
  const [batch, seq, heads, kvHeads, hd] = [2, 5, 4, 2, 4];
  const rows = batch * seq;
  const mask = new Float32Array(batch * seq * seq);
  for (let b = 0; b < batch; b++)
    for (let t = 0; t < seq; t++)
      for (let j = 0; j < seq; j++) mask[(b * seq + t) * seq + j] = j > t ? MASKED : 0;
  return {
    q: tf.tensor2d(randomValues(rows * heads * hd, 1), [rows, heads * hd]),
    k: tf.tensor2d(randomValues(rows * kvHeads * hd, 2), [rows, kvHeads * hd]),
    v: tf.tensor2d(randomValues(rows * kvHeads * hd, 3), [rows, kvHeads * hd]),
    mask: tf.tensor3d(mask, [batch, seq, seq]),
    opts: { batch, heads, kvHeads },
  };
}

describe('attention without native kernels (TF.js ops)', () => {
  beforeAll(async () => {
    await useWasm();
  });

  it('equals a plain loop over the definition (incl. fully masked rows)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { value } = withStock(() => evaluate(c));
        expectClose(value, referenceAttention(c), 'composite vs loops');
        expect(value.every(Number.isFinite)).toBe(true);
      }),
      { numRuns: 100, seed: 60 },
    );
  });

  it('matches a hand-computed case: one query, two keys', () => {
    withStock(() => {
      // q = 1, keys 0 and ln 3 (scale 1): scores 0 and ln 3, weights 1/4 and 3/4 of v = 4 and 8
      const out = attention(
        tf.tensor2d([1, 1], [2, 1]),
        tf.tensor2d([0, Math.log(3)], [2, 1]),
        tf.tensor2d([4, 8], [2, 1]),
        tf.tensor3d([0, MASKED, 0, 0], [1, 2, 2]),
        { batch: 1, heads: 1, kvHeads: 1, scale: 1 },
      );
      const [first, second] = Array.from(out.dataSync());
      expect(first).toBeCloseTo(4, 5); // row 0 sees only key 0
      expect(second).toBeCloseTo(0.25 * 4 + 0.75 * 8, 5);
      out.dispose();
    });
  });

  it('rejects inputs that do not fit, naming the input and the expected shape', () => {
    const { q, k, v, mask, opts } = fixedInputs();
    expect(() => attention(q, k, v, mask, { ...opts, heads: 3 })).toThrow(
      /heads \(3\) must be a multiple of kvHeads \(2\)/,
    );
    expect(() => attention(q, k, v, mask, { ...opts, batch: 3 })).toThrow(
      /q must be \[batch·seq, heads·hd\].*got \[10,16\]/,
    );
    expect(() => attention(q, k, v, mask, { ...opts, kvHeads: 4 })).toThrow(
      /k must be \[batch·seq, kvHeads·hd\] = \[10,16\], got \[10,8\]/,
    );
    expect(() => attention(q, k, tf.zeros([10, 6]) as tf.Tensor2D, mask, opts)).toThrow(
      /v must be .* = \[10,8\], got \[10,6\]/,
    );
    expect(() => attention(q, k, v, tf.zeros([2, 5, 4]) as tf.Tensor3D, opts)).toThrow(
      /mask must be \[batch, seq, seq\] = \[2,5,5\], got \[2,5,4\]/,
    );
    expect(() => attention(q, k, v, mask, { ...opts, batch: 0 })).toThrow(RangeError);
    expect(() => attention(q, k, v, mask, { ...opts, scale: Number.NaN })).toThrow(/scale/);
    tf.dispose([q, k, v, mask]);
  });
});

describeNative('attention with native kernels', () => {
  it('native values and q/k/v gradients equal the TF.js ops; values equal plain loops', () => {
    const before = tf.memory().numTensors;
    fc.assert(
      fc.property(caseArb, (c) => {
        const { stock: reference, native } = stockAndNative(() => evaluate(c));
        expectClose(native.value, reference.value, 'value');
        expectClose(native.value, referenceAttention(c), 'native vs loops');
        expect(native.grads).toHaveLength(3);
        native.grads.forEach((g, i) => {
          expect(g.every(Number.isFinite), `gradient ${i} is finite`).toBe(true);
          expectClose(g, reference.grads[i]!, `gradient ${'qkv'[i]}`);
        });
      }),
      { numRuns: 150, seed: 61 },
    );
    expect(tf.memory().numTensors).toBe(before);
  });

  it('runs PoadAttention(Grad) when registered and TF.js ops when not, with the same result', async () => {
    const { q, k, v, mask, opts } = fixedInputs();
    const run = () => {
      tf.tidy(() => {
        tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
          tf.sum(attention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, opts)),
        )([q, k, v]);
      });
    };
    const nativeNames = await withNative(() => usedKernels(run));
    expect(nativeNames).toEqual(expect.arrayContaining(['PoadAttention', 'PoadAttentionGrad']));
    const nativeOut = withNative(() => tf.tidy(() => attention(q, k, v, mask, opts).dataSync()));
    unregisterNativeKernels();
    const stockNames = await usedKernels(run);
    expect(stockNames.some((n) => n.startsWith('Poad'))).toBe(false);
    expect(stockNames).toEqual(expect.arrayContaining(['BatchMatMul', 'Softmax']));
    const stockOut = tf.tidy(() => attention(q, k, v, mask, opts).dataSync());
    expectClose(nativeOut, stockOut, 'native vs fallback');
    tf.dispose([q, k, v, mask]);
  });

  it('keeps the tensor count flat over many forward and backward calls', () => {
    withNative(() => {
      const { q, k, v, mask, opts } = fixedInputs();
      const step = () => {
        attention(q, k, v, mask, opts).dispose();
        const g = tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
          tf.sum(attention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, opts)),
        )([q, k, v]);
        tf.dispose(g);
      };
      for (let i = 0; i < 10; i++) step();
      const before = tf.memory().numTensors;
      for (let i = 0; i < 300; i++) step();
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([q, k, v, mask]);
    });
  });

  it('a row masked everywhere gives the mean of v, not NaN, and finite gradients', () => {
    withNative(() => {
      const mask = tf.fill([1, 3, 3], MASKED) as tf.Tensor3D;
      const q = tf.tensor2d(randomValues(6, 7, 3), [3, 2]);
      const k = tf.tensor2d(randomValues(6, 8, 3), [3, 2]);
      const v = tf.tensor2d([1, 2, 3, 4, 5, 6], [3, 2]);
      const opts = { batch: 1, heads: 1, kvHeads: 1 };
      const out = attention(q, k, v, mask, opts);
      expect(Array.from(out.dataSync())).toEqual(
        [3, 4, 3, 4, 3, 4].map((x) => expect.closeTo(x, 5)),
      );
      const g = tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
        tf.sum(attention(a as tf.Tensor2D, b as tf.Tensor2D, c as tf.Tensor2D, mask, opts)),
      )([q, k, v]);
      for (const t of g) expect(Array.from(t.dataSync()).every(Number.isFinite)).toBe(true);
      tf.dispose([mask, q, k, v, out, ...g]);
    });
  });
});
