import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { softBad } from '@poad/bellman';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EtpoArgumentError,
  etpoCriticLoss,
  etpoPolicyLoss,
  etpoReleasedPolicyLoss,
  Lion,
  polyakUpdate,
  restrictScores,
  softStats,
} from '../src/index.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const row = (xs: number[]) => tf.tensor2d([xs]);
const read = (t: tf.Tensor) => Array.from(t.dataSync());
const logSoftmaxHost = (z: number[]) => {
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((a, x) => a + Math.exp(x - m), 0));
  return z.map((x) => x - lse);
};

describe('softStats', () => {
  it('matches a hand computation: π = (0.8, 0.2), Q = (1, 0), uniform π̄, β = 0.1', () => {
    const s = softStats(row([Math.log(0.8), Math.log(0.2)]), row([1, 0]), 'uniform', 0.1);
    // KL = 0.8·ln(1.6) + 0.2·ln(0.4) = 0.192744757; V = 0.8 − 0.1·KL.
    expect(read(s.expectedQ)[0]).toBeCloseTo(0.8, 6);
    expect(read(s.kl)[0]).toBeCloseTo(0.192744757, 6);
    expect(read(s.softValue)[0]).toBeCloseTo(0.7807255243, 6);
    // An explicit uniform reference gives the same numbers.
    const explicit = softStats(
      row([Math.log(0.8), Math.log(0.2)]),
      row([1, 0]),
      row([Math.log(0.5), Math.log(0.5)]),
      0.1,
    );
    expect(read(explicit.softValue)[0]).toBeCloseTo(0.7807255243, 6);
  });

  it('reaches β·log Σ π̄·e^{Q/β} exactly at π ∝ π̄·e^{Q/β}, and less anywhere else', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.double({ min: 0.2, max: 2, noNaN: true }),
        (qs, refLogits, other, beta) => {
          const logRef = logSoftmaxHost(refLogits);
          const optimal = logRef.map((l, i) => l + qs[i]! / beta);
          const best = Math.max(...optimal);
          const logZ = best + Math.log(optimal.reduce((a, x) => a + Math.exp(x - best), 0));
          const v = (logits: number[]) =>
            tf.tidy(() => read(softStats(row(logits), row(qs), row(logRef), beta).softValue)[0]!);
          expect(v(optimal)).toBeCloseTo(beta * logZ, 4);
          expect(v(other)).toBeLessThanOrEqual(beta * logZ + 1e-4);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('keeps no tensors beyond what it returns', () => {
    const logits = tf.randomNormal([4, 7], 0, 1, 'float32', 1) as tf.Tensor2D;
    const q = tf.randomNormal([4, 7], 0, 1, 'float32', 2) as tf.Tensor2D;
    const before = tf.memory().numTensors;
    const s = softStats(logits, q, 'uniform', 0.5);
    expect(tf.memory().numTensors).toBe(before + 3);
    tf.dispose([s.expectedQ, s.kl, s.softValue, logits, q]);
  });
});

describe('Lion', () => {
  it('created and disposed, leaves no tensor behind', () => {
    const vars = [tf.variable(tf.ones([3, 2])), tf.variable(tf.zeros([4]))];
    const before = tf.memory().numTensors;
    const opt = new Lion(vars, { lr: 1e-4 });
    expect(tf.memory().numTensors).toBe(before + 2);
    opt.dispose();
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose(vars);
  });
});

describe('the label-restricted token space', () => {
  it('renormalises π and π̄ over the allowed ids (hand computation) and leaves others untouched', () => {
    // Vocabulary of 4; row 0 allows {1, 3}, row 1 allows only {2}, row 2 everything.
    const logits = tf.tensor2d([
      [0, Math.log(3), 5, Math.log(1)],
      [1, 2, 3, 4],
      [Math.log(0.8), Math.log(0.2), -50, -50],
    ]);
    const q = tf.tensor2d([
      [9, 1, 9, 0],
      [9, 9, 0.5, 9],
      [1, 0, 0, 0],
    ]);
    const s = softStats(logits, q, 'uniform', 0.1, [[1, 3], [2], []]);
    // Row 0: π = (3/4, 1/4) on {1, 3}, π̄ = (1/2, 1/2): E_π[Q] = 0.75, KL = 0.75·ln 1.5 + 0.25·ln 0.5.
    const kl0 = 0.75 * Math.log(1.5) + 0.25 * Math.log(0.5);
    expect(read(s.expectedQ)[0]).toBeCloseTo(0.75, 5);
    expect(read(s.kl)[0]).toBeCloseTo(kl0, 5);
    // Row 1: one allowed id: π = π̄ = 1 there, KL 0, the soft value is its Q.
    expect(read(s.kl)[1]).toBeCloseTo(0, 6);
    expect(read(s.softValue)[1]).toBeCloseTo(0.5, 6);
    // Row 2: unrestricted (π ≈ (0.8, 0.2, 0, 0) against a uniform π̄ over 4).
    expect(read(s.expectedQ)[2]).toBeCloseTo(0.8, 5);
    expect(read(s.kl)[2]).toBeCloseTo(0.8 * Math.log(3.2) + 0.2 * Math.log(0.8), 4);
    // A reference distribution is renormalised the same way; its gradient has no NaN.
    const ref = tf.logSoftmax(tf.tensor2d([[0, Math.log(1), 0, Math.log(3)]]));
    const r = restrictScores(
      {
        policyLogits: tf.tensor2d([[0, Math.log(3), 5, 0]]),
        q: tf.tensor2d([[9, 1, 9, 0]]),
        reference: ref as tf.Tensor2D,
      },
      [[1, 3]],
    );
    expect(read(tf.exp(r.reference as tf.Tensor2D)).map((x) => Number(x.toFixed(5)))).toEqual([
      0, 0.25, 0, 0.75,
    ]);
    const g = tf.grad((z: tf.Tensor) =>
      etpoPolicyLoss(
        restrictScores(
          {
            policyLogits: z as tf.Tensor2D,
            q: tf.slice(q, 0, 1) as tf.Tensor2D,
            reference: 'uniform',
          },
          [[1, 3]],
        ).policyLogits,
        tf.slice(q, 0, 1) as tf.Tensor2D,
        'uniform',
        0.1,
      ),
    )(tf.slice(logits, 0, 1));
    expect(read(g).every(Number.isFinite)).toBe(true);
    expect(read(g)[0]).toBe(0);
    expect(read(g)[2]).toBe(0);
  });

  it('refuses a set per row mismatch and ids outside the vocabulary', () => {
    const scores = {
      policyLogits: tf.zeros([2, 3]) as tf.Tensor2D,
      q: tf.zeros([2, 3]) as tf.Tensor2D,
      reference: 'uniform' as const,
    };
    expect(() => restrictScores(scores, [[0]])).toThrow(
      /allowed.*one allowed set per score row \(2\)/,
    );
    expect(() => restrictScores(scores, [[0], [3]])).toThrow(/allowed\[1\].*token id 3 is outside/);
  });
});

describe('etpoPolicyLoss', () => {
  const beta = 0.7;
  const z = [0.3, -1.2, 0.8, 0.1];
  const q = [1.0, -0.5, 0.2, 0.6];
  const ref = logSoftmaxHost([0.5, 0, -0.5, 0.2]);
  const lossAt = (logits: number[]) =>
    tf.tidy(() => etpoPolicyLoss(row(logits), row(q), row(ref), beta).dataSync()[0]!);

  it('has the gradient of Σ π(β·log(π/π̄) − Q): analytic and finite differences agree', () => {
    const grad = tf.tidy(() =>
      read(
        tf.grad((logits: tf.Tensor) =>
          etpoPolicyLoss(logits as tf.Tensor2D, row(q), row(ref), beta),
        )(row(z)),
      ),
    );
    // Analytic: ∂L/∂z_j = π_j·(f_j − Σ_w π_w f_w), f = β(log π − log π̄) − Q.
    const logPi = logSoftmaxHost(z);
    const pi = logPi.map(Math.exp);
    const f = logPi.map((l, i) => beta * (l - ref[i]!) - q[i]!);
    const mean = pi.reduce((a, p, i) => a + p * f[i]!, 0);
    pi.forEach((p, j) => {
      expect(grad[j]).toBeCloseTo(p * (f[j]! - mean), 5);
    });
    const h = 1e-2;
    z.forEach((_, j) => {
      const up = z.map((x, i) => (i === j ? x + h : x));
      const down = z.map((x, i) => (i === j ? x - h : x));
      expect(grad[j]).toBeCloseTo((lossAt(up) - lossAt(down)) / (2 * h), 3);
    });
  });

  it('is minimised by π ∝ π̄·exp(Q/β), where it equals −β·log Z', () => {
    const optimal = ref.map((l, i) => l + q[i]! / beta);
    const best = Math.max(...optimal);
    const logZ = best + Math.log(optimal.reduce((a, x) => a + Math.exp(x - best), 0));
    expect(lossAt(optimal)).toBeCloseTo(-beta * logZ, 5);
    const grad = tf.tidy(() =>
      read(
        tf.grad((logits: tf.Tensor) =>
          etpoPolicyLoss(logits as tf.Tensor2D, row(q), row(ref), beta),
        )(row(optimal)),
      ),
    );
    for (const g of grad) expect(Math.abs(g)).toBeLessThan(1e-5);
    expect(lossAt(z)).toBeGreaterThan(-beta * logZ);
  });

  it('sends no gradient into Q', () => {
    const g = tf.tidy(() =>
      read(
        tf.grad((qq: tf.Tensor) => etpoPolicyLoss(row(z), qq as tf.Tensor2D, 'uniform', beta))(
          row(q),
        ),
      ),
    );
    expect(g.every((x) => x === 0)).toBe(true);
  });

  it('averages rows by the mask', () => {
    const two = tf.tidy(() => {
      const logits = tf.tensor2d([z, z.map((x) => -x)]);
      const qq = tf.tensor2d([q, q]);
      const masked = etpoPolicyLoss(
        logits,
        qq,
        'uniform',
        beta,
        tf.tensor1d([1, 0]),
      ).dataSync()[0]!;
      const first = etpoPolicyLoss(row(z), row(q), 'uniform', beta).dataSync()[0]!;
      return [masked, first];
    });
    expect(two[0]).toBeCloseTo(two[1]!, 6);
  });
});

describe('etpoReleasedPolicyLoss', () => {
  const beta = 0.3;
  // Three rows, vocabulary of 4; the reference is checked but does not enter.
  const Z = [
    [0.3, -1.2, 0.8, 0.1],
    [2.0, 0.5, -0.7, 0.0],
    [-0.4, 0.9, 0.2, 1.5],
  ];
  const Q = [
    [1.0, -0.5, 0.2, 0.6],
    [12.0, 9.5, 14.0, 10.5],
    [0.0, 0.3, -0.2, 0.1],
  ];
  const REF = Z.map((r) => logSoftmaxHost(r.map((x) => 0.5 * x)));
  /** mean over rows (weighted by `m`) of mean_w (β·log π(w) − Q(w)), in plain loops. */
  const byHand = (z: number[][], q: number[][], m?: number[]) => {
    let total = 0;
    let weight = 0;
    z.forEach((zr, r) => {
      const lp = logSoftmaxHost(zr);
      let sum = 0;
      for (let w = 0; w < zr.length; w++) sum += beta * lp[w]! - q[r]![w]!;
      const wr = m ? m[r]! : 1;
      total += wr * (sum / zr.length);
      weight += wr;
    });
    return total / weight;
  };

  it('is the mean over the vocabulary of β·log π − Q, averaged over rows (hand computation)', () => {
    const [plain, masked, withRef] = tf.tidy(() => [
      etpoReleasedPolicyLoss(tf.tensor2d(Z), tf.tensor2d(Q), 'uniform', beta).dataSync()[0]!,
      etpoReleasedPolicyLoss(
        tf.tensor2d(Z),
        tf.tensor2d(Q),
        'uniform',
        beta,
        tf.tensor1d([1, 0, 1]),
      ).dataSync()[0]!,
      etpoReleasedPolicyLoss(tf.tensor2d(Z), tf.tensor2d(Q), tf.tensor2d(REF), beta).dataSync()[0]!,
    ]);
    expect(plain).toBeCloseTo(byHand(Z, Q), 5);
    expect(masked).toBeCloseTo(byHand(Z, Q, [1, 0, 1]), 5);
    // Not π-weighted: it differs from the objective's form on the same inputs.
    const objective = tf.tidy(
      () => etpoPolicyLoss(tf.tensor2d(Z), tf.tensor2d(Q), 'uniform', beta).dataSync()[0]!,
    );
    expect(Math.abs(plain - objective)).toBeGreaterThan(0.1);
    // log π, not log(π/π̄): the reference changes nothing.
    expect(withRef).toBe(plain);
  });

  it('has the gradient β·(1/V − π)/rows w.r.t. the logits (masked: weighted by the mask), none into Q', () => {
    const mask = [1, 0, 2];
    const [gPlain, gMasked, gQ] = tf.tidy(() => {
      const q = tf.tensor2d(Q);
      const plain = tf.grad((z: tf.Tensor) =>
        etpoReleasedPolicyLoss(z as tf.Tensor2D, q, 'uniform', beta),
      )(tf.tensor2d(Z));
      const masked = tf.grad((z: tf.Tensor) =>
        etpoReleasedPolicyLoss(z as tf.Tensor2D, q, 'uniform', beta, tf.tensor1d(mask)),
      )(tf.tensor2d(Z));
      const intoQ = tf.grad((qq: tf.Tensor) =>
        etpoReleasedPolicyLoss(tf.tensor2d(Z), qq as tf.Tensor2D, 'uniform', beta),
      )(q);
      return [read(plain), read(masked), read(intoQ)];
    });
    const V = 4;
    const rows = Z.length;
    const maskSum = mask.reduce((a, x) => a + x, 0);
    Z.forEach((zr, r) => {
      const pi = logSoftmaxHost(zr).map(Math.exp);
      pi.forEach((p, w) => {
        expect(gPlain[r * V + w]).toBeCloseTo((beta * (1 / V - p)) / rows, 6);
        expect(gMasked[r * V + w]).toBeCloseTo((beta * (1 / V - p) * mask[r]!) / maskSum, 6);
      });
    });
    // Descent moves each logit by −β·(1/V − π): up where π > 1/V, down elsewhere (row 0: the
    // likeliest token 2 rises, the least likely token 1 falls).
    expect(gPlain[2]!).toBeLessThan(0);
    expect(gPlain[1]!).toBeGreaterThan(0);
    expect(gQ).toHaveLength(rows * V);
    expect(gQ.every((x) => x === 0)).toBe(true);
  });

  it('sharpens π under gradient descent (uniform is its maximum), whatever Q is', () => {
    const z0 = Z[0]!;
    const descend = (q: number[]) =>
      tf.tidy(() => {
        const z = tf.variable(row(z0));
        const qq = row(q);
        for (let i = 0; i < 40; i++) {
          const g = tf.grad((x: tf.Tensor) =>
            etpoReleasedPolicyLoss(x as tf.Tensor2D, qq, 'uniform', beta),
          )(z);
          z.assign(tf.sub(z, tf.mul(5, g)));
        }
        const out = read(z);
        z.dispose();
        return out;
      });
    const entropy = (z: number[]) => -logSoftmaxHost(z).reduce((a, l) => a + Math.exp(l) * l, 0);
    const a = descend(Q[0]!);
    // Q favouring the least likely token instead changes nothing.
    const b = descend([-5, 9, -5, -5]);
    expect(b).toEqual(a);
    expect(entropy(a)).toBeLessThan(entropy(z0) - 0.1);
    const before = logSoftmaxHost(z0).map(Math.exp);
    const after = logSoftmaxHost(a).map(Math.exp);
    expect(after[2]!).toBeGreaterThan(before[2]! + 0.05);
    expect(after[1]!).toBeLessThan(before[1]!);
    // At the uniform policy the gradient vanishes, and the loss there is its largest value.
    const [gu, atUniform, atZ] = tf.tidy(() => [
      read(
        tf.grad((x: tf.Tensor) =>
          etpoReleasedPolicyLoss(x as tf.Tensor2D, row(Q[0]!), 'uniform', beta),
        )(row([0.4, 0.4, 0.4, 0.4])),
      ),
      etpoReleasedPolicyLoss(row([0, 0, 0, 0]), row(Q[0]!), 'uniform', beta).dataSync()[0]!,
      etpoReleasedPolicyLoss(row(z0), row(Q[0]!), 'uniform', beta).dataSync()[0]!,
    ]);
    for (const g of gu as number[]) expect(Math.abs(g)).toBeLessThan(1e-7);
    expect(atUniform as number).toBeGreaterThan(atZ as number);
  });

  it("over a restricted token space, averages over each row's allowed ids with gradient β·(1/|A| − π)", () => {
    const allowed = [[0, 2], [], [1, 2, 3]];
    const [loss, grad] = tf.tidy(() => {
      const q = tf.tensor2d(Q);
      const raw = tf.tensor2d(Z);
      // As the trainer calls it: scores restricted by restrictScores, and the same sets.
      const s = restrictScores({ policyLogits: raw, q, reference: 'uniform' }, allowed);
      const l = etpoReleasedPolicyLoss(s.policyLogits, q, s.reference, beta, undefined, allowed);
      const g = tf.grad((z: tf.Tensor) =>
        etpoReleasedPolicyLoss(z as tf.Tensor2D, q, 'uniform', beta, undefined, allowed),
      )(raw);
      return [l.dataSync()[0]!, read(g)];
    });
    let expected = 0;
    const V = 4;
    Z.forEach((zr, r) => {
      const ids = allowed[r]!.length ? allowed[r]! : [0, 1, 2, 3];
      const lp = logSoftmaxHost(ids.map((w) => zr[w]!));
      let sum = 0;
      ids.forEach((w, j) => {
        sum += beta * lp[j]! - Q[r]![w]!;
      });
      expected += sum / ids.length / Z.length;
      for (let w = 0; w < V; w++) {
        const j = ids.indexOf(w);
        const want = j < 0 ? 0 : (beta * (1 / ids.length - Math.exp(lp[j]!))) / Z.length;
        expect(grad[r * V + w], `row ${r}, id ${w}`).toBeCloseTo(want, 6);
      }
    });
    expect(loss).toBeCloseTo(expected, 5);
  });

  it('keeps no tensors and refuses mismatched shapes, naming the argument', () => {
    const z = tf.tensor2d(Z);
    const q = tf.tensor2d(Q);
    const short = row([0, 1, 2, 3]);
    const live = tf.memory().numTensors;
    tf.dispose(etpoReleasedPolicyLoss(z, q, 'uniform', beta, undefined, [[0], [], [3]]));
    expect(tf.memory().numTensors).toBe(live);
    expect(() => etpoReleasedPolicyLoss(z, short, 'uniform', beta)).toThrow(EtpoArgumentError);
    expect(() => etpoReleasedPolicyLoss(z, q, 'uniform', beta, undefined, [[0]])).toThrow(
      /allowed: expected one allowed set per score row/,
    );
    expect(() => etpoReleasedPolicyLoss(z, q, 'uniform', 0)).toThrow(/beta/);
    expect(tf.memory().numTensors).toBe(live);
    tf.dispose([z, q, short]);
  });
});

describe('etpoCriticLoss', () => {
  it('regresses the chosen tokens on soft-BAD targets of a hand-computed two-action example', async () => {
    // Two actions: tokens (2, 0) then (1); γ = 0.9, rewards (0, 1), the episode ends after the second.
    // Vocabulary of 3; the target critic's Q and the policy at the three token positions:
    const targetQ = [
      [0.5, 0.1, 0.0],
      [0.2, 0.0, 0.9],
      [0.3, 0.4, 0.0],
    ];
    const policy = [
      [0, 0, 0],
      [0, 0, Math.log(3)],
      [Math.log(2), 0, 0],
    ];
    const beta = 0.5;
    const s = softStats(tf.tensor2d(policy), tf.tensor2d(targetQ), 'uniform', beta);
    const values = Array.from(await s.softValue.data());
    tf.dispose([s.expectedQ, s.kl, s.softValue]);
    // Hand: position 0: π uniform, E Q = 0.2, KL 0 → V0 = 0.2.
    expect(values[0]).toBeCloseTo(0.2, 6);
    // Position 1: π = (0.2, 0.2, 0.6), E Q = 0.04 + 0.54 = 0.58, KL = 0.4·ln(0.6) + 0.6·ln(1.8).
    const kl1 = 0.4 * Math.log(0.6) + 0.6 * Math.log(1.8);
    expect(values[1]).toBeCloseTo(0.58 - beta * kl1, 6);
    // Position 2: π = (0.5, 0.25, 0.25), E Q = 0.15 + 0.1 = 0.25, KL = 0.5·ln 1.5 + 0.5·ln 0.75.
    const kl2 = 0.5 * Math.log(1.5) + 0.5 * Math.log(0.75);
    expect(values[2]).toBeCloseTo(0.25 - beta * kl2, 6);
    const y = softBad(
      { rewards: [0, 1], dones: [false, true], tokenCounts: [2, 1], values, bootstrapValue: 0 },
      { gamma: 0.9 },
    );
    // Inner token: y0 = V1; last token of action 0: 0 + 0.9·V2; last of action 1: r = 1.
    expect(Array.from(y)).toEqual(
      [values[1]!, 0.9 * values[2]!, 1].map((v) => expect.closeTo(v, 12)),
    );
    // The online critic's Q at the chosen tokens (2, 0, 1) is 0.3, -0.1, 0.6.
    const onlineQ = tf.tensor2d([
      [0.0, 0.0, 0.3],
      [-0.1, 0.5, 0.5],
      [0.2, 0.6, 0.1],
    ]);
    const chosen = tf.tensor1d([2, 0, 1], 'int32');
    const targets = tf.tensor1d(Array.from(y));
    const loss = etpoCriticLoss(onlineQ, chosen, targets).dataSync()[0]!;
    const hand = (0.5 * ((0.3 - y[0]!) ** 2 + (-0.1 - y[1]!) ** 2 + (0.6 - 1) ** 2)) / 3;
    expect(loss).toBeCloseTo(hand, 6);
    // Gradient: (Q(chosen) − y)/rows at the chosen entries only, nothing into the targets.
    const [gq, gy] = tf.grads((qq: tf.Tensor, yy: tf.Tensor) =>
      etpoCriticLoss(qq as tf.Tensor2D, chosen, yy as tf.Tensor1D),
    )([onlineQ, targets]);
    const g = (await gq!.array()) as number[][];
    expect(g[0]![2]).toBeCloseTo((0.3 - y[0]!) / 3, 6);
    expect(g[1]![0]).toBeCloseTo((-0.1 - y[1]!) / 3, 6);
    expect(g[2]![1]).toBeCloseTo((0.6 - 1) / 3, 6);
    expect(g.flat().filter((x) => x !== 0)).toHaveLength(3);
    expect(read(gy!).every((x) => x === 0)).toBe(true);
    tf.dispose([onlineQ, chosen, targets, gq!, gy!]);
  });
});

describe('Lion', () => {
  it('matches a hand computation over two steps, with decoupled weight decay', async () => {
    const p = tf.variable(tf.tensor1d([1, -2, 0.5]));
    const lion = new Lion([p], { lr: 0.1, weightDecay: 0.5 });
    // Step 1: m = 0 → c = 0.1·g; sign(c) = sign(g); p ← p·(1 − 0.05) − 0.1·sign(g); m ← 0.01·g.
    const g1 = tf.tensor1d([0.3, -0.2, 0]);
    lion.step([g1]);
    const p1 = [1 * 0.95 - 0.1, -2 * 0.95 + 0.1, 0.5 * 0.95];
    read(p).forEach((x, i) => {
      expect(x).toBeCloseTo(p1[i]!, 6);
    });
    // Step 2: m = (0.003, −0.002, 0); g2 = (−0.01, 0, 1): c = 0.9·m + 0.1·g2 = (0.0017, −0.0018, 0.1).
    lion.step([tf.tensor1d([-0.01, 0, 1])]);
    const p2 = p1.map((x, i) => x * 0.95 - 0.1 * [1, -1, 1][i]!);
    read(p).forEach((x, i) => {
      expect(x).toBeCloseTo(p2[i]!, 6);
    });
    const state = await lion.getState();
    expect(state.kind).toBe('lion');
    expect(state.step).toBe(2);
    // m = 0.99·(0.003, −0.002, 0) + 0.01·(−0.01, 0, 1)
    [0.99 * 0.003 - 0.0001, 0.99 * -0.002, 0.01].forEach((x, i) => {
      expect(state.m[0]![i]).toBeCloseTo(x, 7);
    });
    const other = new Lion([p], { lr: 0.1 });
    other.setState(state);
    expect(await other.getState()).toEqual(state);
    expect(() => other.setState({ ...state, m: [] })).toThrow(
      /optimiser has 1 variables, state has 0/,
    );
    tf.dispose([p, g1]);
    lion.dispose();
    other.dispose();
  });
});

describe('polyakUpdate', () => {
  it('moves targets by τ towards the online weights', () => {
    const online = [tf.variable(tf.tensor1d([1, 2])), tf.variable(tf.tensor2d([[4]]))];
    const target = [tf.variable(tf.tensor1d([0, 0])), tf.variable(tf.tensor2d([[0]]))];
    const before = tf.memory().numTensors;
    polyakUpdate(target, online, 0.25);
    polyakUpdate(target, online, 0.25);
    expect(tf.memory().numTensors).toBe(before);
    // After two steps: (1 − (0.75)²)·θ.
    expect(read(target[0]!)).toEqual([0.4375, 0.875]);
    expect(read(target[1]!)).toEqual([1.75]);
    expect(() => polyakUpdate(target, online, 0)).toThrow(EtpoArgumentError);
    expect(() => polyakUpdate(target.slice(1), online)).toThrow(/expected 2 variables/);
    expect(() => polyakUpdate([target[1]!, target[0]!], online)).toThrow(/target\[0\]: shape/);
    tf.dispose([...online, ...target]);
  });
});

describe('bad input', () => {
  it('names the argument and what is expected', () => {
    const a = tf.zeros([2, 3]) as tf.Tensor2D;
    const b = tf.zeros([2, 4]) as tf.Tensor2D;
    expect(() => softStats(a, a, 'uniform', 0)).toThrow(/beta: expected a finite number > 0/);
    expect(() => softStats(a, b, 'uniform', 1)).toThrow(/q: expected shape \[2, 3\], got \[2, 4\]/);
    expect(() => etpoPolicyLoss(a, a, b, 1)).toThrow(/reference: expected shape/);
    expect(() => etpoCriticLoss(a, tf.tensor1d([0, 1]), tf.tensor1d([0, 0]))).toThrow(
      /chosen: expected an int32/,
    );
    expect(() => etpoPolicyLoss(a, a, 'uniform', 1, tf.tensor1d([1]))).toThrow(
      /mask: expected shape \[2\]/,
    );
  });
});
