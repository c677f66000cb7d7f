import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  approxKl,
  candidateDistribution,
  candidateNormaliser,
  entropyBonus,
  huber,
  maskedSum,
  normaliseAdvantages,
  policyLoss,
  resolveConfig,
  valueLoss,
} from '../src/index.js';
import { useCpu } from './backend.js';
import fixture from './fixtures/algorithms-s7.json';

const vec = (id: string) => {
  const v = fixture.losses_and_normalisation.find((x) => x.id === id);
  if (v === undefined) throw new Error(`missing vector ${id}`);
  return v as Record<string, unknown>;
};
const nums = (t: tf.Tensor) => Array.from(t.dataSync());
const close = (a: ArrayLike<number>, b: ArrayLike<number>, digits = 5) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i]!, digits);
};

beforeAll(useCpu);

describe('advantage normalisation (§7 tppo_adv_norm_nan_trick)', () => {
  const v = vec('tppo_adv_norm_nan_trick') as {
    advantages: number[][];
    token_mask: number[][];
    normalized: number[][];
  };
  it("'nan-trick' reproduces the original trainer's vector exactly", () => {
    const out = normaliseAdvantages(v.advantages.flat(), v.token_mask.flat(), 'nan-trick');
    close(out, v.normalized.flat());
  });
  it("'masked' (default) uses every real token, zeros included, and zeroes padding", () => {
    const a = v.advantages.flat();
    const m = v.token_mask.flat();
    const real = a.filter((_, i) => m[i] === 1); // 0.5, -0.2, 1, 0, 0.3
    const mean = real.reduce((s, x) => s + x, 0) / real.length;
    const sd = Math.sqrt(real.reduce((s, x) => s + (x - mean) ** 2, 0) / real.length);
    expect(mean).toBeCloseTo(0.32, 12);
    const out = normaliseAdvantages(a, m, 'masked');
    close(
      out,
      a.map((x, i) => (m[i] === 1 ? (x - mean) / (sd + 1e-8) : 0)),
    );
    expect(Array.from(out).some((x, i) => x !== normaliseAdvantages(a, m, 'nan-trick')[i])).toBe(
      true,
    );
  });
  it('padding values never change the normalised real entries (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: -5, max: 5, noNaN: true }), fc.boolean()), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        (entries, junk) => {
          const a = entries.map(([x]) => x);
          const m = entries.map(([, real]) => (real ? 1 : 0));
          const b = a.map((x, i) => (m[i] === 1 ? x : junk));
          const oa = normaliseAdvantages(a, m, 'masked');
          const ob = normaliseAdvantages(b, m, 'masked');
          for (let i = 0; i < a.length; i++) {
            if (oa[i] !== ob[i]) return false;
            if (m[i] === 0 && oa[i] !== 0) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });
  it('masked output has mean 0 and population std 1 over real tokens (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 2, maxLength: 40 }),
        (a) => {
          const mean = a.reduce((s, x) => s + x, 0) / a.length;
          const sd = Math.sqrt(a.reduce((s, x) => s + (x - mean) ** 2, 0) / a.length);
          fc.pre(sd > 1e-3);
          const o = normaliseAdvantages(a, null, 'masked');
          const om = o.reduce((s, x) => s + x, 0) / o.length;
          const osd = Math.sqrt(o.reduce((s, x) => s + (x - om) ** 2, 0) / o.length);
          return Math.abs(om) < 1e-4 && Math.abs(osd - 1) < 1e-3;
        },
      ),
      { numRuns: 200 },
    );
  });
  it("'chunk:N' standardises each chunk of N samples with the unbiased σ (hand-computed)", () => {
    // Five single-entry samples (action level), chunks of 2: [1, 3], [2, 6], [5].
    // [1, 3]: mean 2, unbiased σ = √2 → ∓1/√2; [2, 6]: mean 4, σ = √8 → ∓1/√2; [5]: alone → 0.
    const out = normaliseAdvantages([1, 3, 2, 6, 5], null, 'chunk:2', [1, 1, 1, 1, 1]);
    const h = 1 / Math.SQRT2;
    [-h, h, -h, h, 0].forEach((x, i) => {
      expect(out[i]).toBeCloseTo(x, 6);
    });
    // Token level: samples of 2 and 1 tokens in one chunk of 2 samples → one group of 3 entries.
    const tok = normaliseAdvantages([0, 3, 6, 10], null, 'chunk:2', [2, 1, 1]);
    // [0, 3, 6]: mean 3, unbiased σ = 3 → −1, 0, 1; the last sample is alone → 0.
    expect(Array.from(tok).map((x) => Number(x.toFixed(6)))).toEqual([-1, 0, 1, 0]);
    expect(() => normaliseAdvantages([1, 2], null, 'chunk:2')).toThrow(/needs sampleLengths/);
    expect(() => normaliseAdvantages([1, 2], null, 'chunk:2', [3])).toThrow(/sum to 3/);
    expect(resolveConfig({ advantageNormalisation: 'chunk:4' }).advantageNormalisation).toBe(
      'chunk:4',
    );
    expect(() => resolveConfig({ advantageNormalisation: 'chunk:0' as 'chunk:1' })).toThrow(
      /advantageNormalisation.*chunk:N/,
    );
  });

  it('an all-zero minibatch gives zeros (the original gives NaN)', () => {
    expect(Array.from(normaliseAdvantages([0, 0, 0], null, 'nan-trick'))).toEqual([0, 0, 0]);
    expect(Array.from(normaliseAdvantages([0, 0, 0], null, 'masked'))).toEqual([0, 0, 0]);
  });
});

describe('policy loss (§7 tppo_policy_loss)', () => {
  const v = vec('tppo_policy_loss') as {
    logp_new: number[];
    logp_old: number[];
    adv_normalised: number[];
    entropy: number[];
    token_mask: number[];
    clip: number;
    entropy_coef: number;
    per_token_loss: number[];
    policy_loss: number;
    approx_kl: number;
    entropy_mean: number;
  };
  it('reproduces per-token loss, masked mean, approx KL and entropy', () => {
    tf.tidy(() => {
      const lpN = tf.tensor1d(v.logp_new);
      const lpO = tf.tensor1d(v.logp_old);
      const ent = tf.tensor1d(v.entropy);
      const m = tf.tensor1d(v.token_mask);
      const per = tf.add(
        policyLoss(lpN, lpO, tf.tensor1d(v.adv_normalised), v.clip),
        entropyBonus(ent, v.entropy_coef),
      );
      close(nums(per), v.per_token_loss);
      const count = v.token_mask.reduce((s, x) => s + x, 0);
      expect(maskedSum(per, m).dataSync()[0]! / count).toBeCloseTo(v.policy_loss, 5);
      expect(maskedSum(approxKl(lpN, lpO), m).dataSync()[0]! / count).toBeCloseTo(v.approx_kl, 5);
      expect(maskedSum(ent, m).dataSync()[0]! / count).toBeCloseTo(v.entropy_mean, 6);
    });
  });
  it('padding that holds NaN or infinity never reaches the masked sum', () => {
    tf.tidy(() => {
      const x = tf.tensor1d([1, 2, Number.NaN, Number.POSITIVE_INFINITY]);
      expect(maskedSum(x, tf.tensor1d([1, 1, 0, 0])).dataSync()[0]).toBe(3);
    });
  });
  it('approx KL is non-negative and zero only at equal log-probs (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -8, max: 0, noNaN: true }),
        fc.double({ min: -8, max: 0, noNaN: true }),
        (a, b) => {
          const k = tf.tidy(() => approxKl(tf.scalar(a), tf.scalar(b)).dataSync()[0]!);
          return k >= -1e-6 && (Math.abs(a - b) > 1e-3 || k < 1e-5);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('value loss (§7 value_loss_clipped_mse, huber_repo_vs_correct)', () => {
  it('clipped MSE reproduces the vector', () => {
    const v = vec('value_loss_clipped_mse') as {
      v_new: number[];
      v_old: number[];
      returns: number[];
      clip: number;
      value_loss_coef: number;
      per_token: number[];
      value_loss: number;
    };
    tf.tidy(() => {
      const per = valueLoss(
        tf.tensor1d(v.v_new),
        tf.tensor1d(v.v_old),
        tf.tensor1d(v.returns),
        v.clip,
        'mse',
        10,
      );
      close(nums(per), v.per_token);
      expect(tf.mean(per).dataSync()[0]! * v.value_loss_coef).toBeCloseTo(v.value_loss, 6);
    });
  });
  it('Huber is the correct formula (the reference code returns 0 below −δ)', () => {
    const v = vec('huber_repo_vs_correct') as {
      delta: number;
      errors: number[];
      repo: number[];
      correct: number[];
    };
    const out = tf.tidy(() => nums(huber(tf.tensor1d(v.errors), v.delta)));
    close(out, v.correct);
    expect(out[2]).not.toBeCloseTo(v.repo[2]!, 3);
  });
});

describe('TWOSOME normalisation (§7 twosome_normalisation)', () => {
  const v = vec('twosome_normalisation') as {
    candidates: string[];
    token_logprobs: number[][];
    word_counts: number[];
    token_counts: number[];
    word_norm: { logits: number[]; probs: number[]; logprobs: number[] };
    token_norm: { logits: number[]; probs: number[]; logprobs: number[] };
  };
  const sums = v.token_logprobs.map((r) => r.reduce((s, x) => s + x, 0));
  for (const mode of ['words', 'tokens'] as const) {
    it(`${mode} normalisation reproduces logits, probabilities and log-probabilities`, () => {
      const norms = v.candidates.map((c, i) => candidateNormaliser(c, v.token_counts[i]!, mode));
      expect(norms).toEqual(mode === 'words' ? v.word_counts : v.token_counts);
      const d = candidateDistribution(sums, norms);
      const ref = mode === 'words' ? v.word_norm : v.token_norm;
      close(d.logits, ref.logits, 6);
      close(d.probs, ref.probs, 6);
      close(d.logProbs, ref.logprobs, 6);
      const h = -ref.probs.reduce((s, p, i) => s + p * ref.logprobs[i]!, 0);
      expect(d.entropy).toBeCloseTo(h, 5);
    });
  }
  it("'none' uses the raw sums", () => {
    const d = candidateDistribution(sums, [1, 1, 1]);
    close(d.logits, sums, 12);
    expect(candidateNormaliser('a b', 7, 'none')).toBe(1);
  });
});
