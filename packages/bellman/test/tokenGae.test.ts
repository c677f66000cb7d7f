import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionGae } from '../src/actionGae.js';
import { archer, makeTokenGae, ntpo, poad } from '../src/presets.js';
import { tokenGae } from '../src/tokenGae.js';
import { RUNS, type Seg, segmentArb, unit } from './arbitraries.js';
import { flatValid, paddedTokenGae, toPadded } from './reference.js';

const close = (a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-9) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    const scale = Math.max(1, Math.abs(b[i] as number));
    expect(Math.abs((a[i] as number) - (b[i] as number)) / scale, `index ${i}`).toBeLessThan(tol);
  }
};

/** Discounted Monte-Carlo return of each action, bootstrapped at the end unless done. */
function monteCarlo(seg: Seg, gamma: number): number[] {
  const T = seg.rewards.length;
  const G = new Array<number>(T);
  let next = seg.bootstrapValue;
  for (let t = T - 1; t >= 0; t--) {
    G[t] = seg.rewards[t]! + (seg.dones[t] ? 0 : gamma * next);
    next = G[t]!;
  }
  return G;
}

describe('tokenGae equals the padded reference loops', () => {
  for (const [name, fn] of [
    ['poad', poad],
    ['ntpo', ntpo],
    ['archer', archer],
  ] as const) {
    it(`${name} on random segments`, () => {
      fc.assert(
        fc.property(segmentArb(), unit, unit, (seg, gamma, lambda) => {
          const ours = fn(seg, { gamma, lambda });
          const p = toPadded(seg);
          const ref = paddedTokenGae(name, p.tok, p.v, p.r, p.mNext, gamma, lambda);
          close(ours.advantages, flatValid(ref.A, seg.tokenCounts));
          close(ours.returns, flatValid(ref.R, seg.tokenCounts));
        }),
        RUNS,
      );
    });
  }
  it('ntpo with any γ_w matches the reference with that γ_w', () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, unit, (seg, gamma, lambda, intraGamma) => {
        const ours = ntpo(seg, { gamma, lambda, intraGamma });
        const p = toPadded(seg);
        const ref = paddedTokenGae('ntpo', p.tok, p.v, p.r, p.mNext, gamma, lambda, intraGamma);
        close(ours.advantages, flatValid(ref.A, seg.tokenCounts));
      }),
      RUNS,
    );
  });
});

describe('properties of the BAD backup', () => {
  it('NTPO with γ_w = 1 is POAD, bit for bit (the γ_w ablation starts from POAD)', () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, (seg, gamma, lambda) => {
        const a = ntpo(seg, { gamma, lambda, intraGamma: 1 });
        const b = poad(seg, { gamma, lambda });
        expect(Array.from(a.advantages)).toEqual(Array.from(b.advantages));
        expect(Array.from(a.returns)).toEqual(Array.from(b.returns));
      }),
      RUNS,
    );
  });
  it('single-token actions: POAD = NTPO = ARCHER = actionGae', () => {
    fc.assert(
      fc.property(segmentArb({ maxTokens: 1 }), unit, unit, (seg, gamma, lambda) => {
        const a = actionGae(seg, { gamma, lambda });
        for (const fn of [poad, ntpo, archer]) {
          const t = fn(seg, { gamma, lambda });
          close(t.advantages, a.advantages);
          close(t.returns, a.returns);
        }
      }),
      RUNS,
    );
  });

  it("λ_w = 1: POAD's first-token advantage is the action-level GAE on first-token values", () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, (seg, gamma, lambda) => {
        const t = poad(seg, { gamma, lambda, intraLambda: 1 });
        const firsts: number[] = [];
        let o = 0;
        for (const n of seg.tokenCounts) {
          firsts.push(o);
          o += n;
        }
        const a = actionGae(
          { ...seg, values: firsts.map((k) => seg.values[k]!) },
          { gamma, lambda },
        );
        close(
          firsts.map((k) => t.advantages[k]!),
          a.advantages,
        );
        close(
          firsts.map((k) => t.returns[k]!),
          a.returns,
        );
      }),
      RUNS,
    );
  });

  it("λ_w unset is λ_w = λ, bit for bit; λ_w changes only inner tokens' decay", () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, unit, (seg, gamma, lambda, intraGamma) => {
        const a = tokenGae(seg, { gamma, lambda, intraGamma });
        const b = tokenGae(seg, { gamma, lambda, intraGamma, intraLambda: lambda });
        expect(Array.from(a.advantages)).toEqual(Array.from(b.advantages));
        // λ_w = 0: an inner token's advantage is its one-step TD error γ_w·V(k+1) − V(k).
        const c = tokenGae(seg, { gamma, lambda, intraGamma, intraLambda: 0 });
        let o = 0;
        for (const n of seg.tokenCounts) {
          for (let k = o; k < o + n - 1; k++)
            expect(c.advantages[k]).toBeCloseTo(
              intraGamma * seg.values[k + 1]! - seg.values[k]!,
              9,
            );
          o += n;
        }
      }),
      RUNS,
    );
  });

  it('γ = 1: NTPO = POAD', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, lambda) => {
        const p = poad(seg, { gamma: 1, lambda });
        const n = ntpo(seg, { gamma: 1, lambda });
        close(n.advantages, p.advantages);
        close(n.returns, p.returns);
      }),
      RUNS,
    );
  });

  it('λ = 1: every token of an action gets the same POAD return, the discounted MC return', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, gamma) => {
        const { returns } = poad(seg, { gamma, lambda: 1 });
        const G = monteCarlo(seg, gamma);
        let o = 0;
        seg.tokenCounts.forEach((n, t) => {
          for (let k = 0; k < n; k++) {
            expect(Math.abs(returns[o + k]! - G[t]!)).toBeLessThan(
              1e-9 * Math.max(1, Math.abs(G[t]!)),
            );
          }
          o += n;
        });
      }),
      RUNS,
    );
  });

  it('λ = 1: NTPO discounts the return by γ^(tokens left) inside an action (the discrepancy)', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, gamma) => {
        const { returns } = ntpo(seg, { gamma, lambda: 1 });
        let o = 0;
        const firsts: number[] = [];
        seg.tokenCounts.forEach((n) => {
          firsts.push(o);
          o += n;
        });
        seg.tokenCounts.forEach((n, t) => {
          const nextFirst =
            t + 1 < seg.tokenCounts.length ? returns[firsts[t + 1]!]! : seg.bootstrapValue;
          const target = seg.rewards[t]! + (seg.dones[t] ? 0 : gamma * nextFirst);
          for (let k = 0; k < n; k++) {
            const expected = gamma ** (n - 1 - k) * target;
            expect(Math.abs(returns[firsts[t]! + k]! - expected)).toBeLessThan(
              1e-9 * Math.max(1, Math.abs(expected)),
            );
          }
        });
      }),
      RUNS,
    );
  });

  it('λ = 0: POAD advantages are one-step BAD TD errors', () => {
    fc.assert(
      fc.property(segmentArb(), unit, (seg, gamma) => {
        const { advantages } = poad(seg, { gamma, lambda: 0 });
        let o = 0;
        seg.tokenCounts.forEach((n, t) => {
          const vNext = t + 1 < seg.tokenCounts.length ? seg.values[o + n]! : seg.bootstrapValue;
          for (let k = 0; k < n - 1; k++) {
            expect(advantages[o + k]!).toBeCloseTo(seg.values[o + k + 1]! - seg.values[o + k]!, 12);
          }
          const last =
            seg.rewards[t]! + (seg.dones[t] ? 0 : gamma * vNext) - seg.values[o + n - 1]!;
          expect(advantages[o + n - 1]!).toBeCloseTo(last, 12);
          o += n;
        });
      }),
      RUNS,
    );
  });

  it('a done cuts everything after it', () => {
    fc.assert(
      fc.property(
        segmentArb({ minT: 2 }),
        segmentArb({ minT: 1 }),
        unit,
        unit,
        fc.constantFrom(poad, ntpo, archer),
        (head, tail, gamma, lambda, fn) => {
          // head ends in a done; whatever follows must not change head's numbers.
          const h = { ...head, dones: [...head.dones.slice(0, -1), true] };
          const joined = {
            rewards: [...h.rewards, ...tail.rewards],
            dones: [...h.dones, ...tail.dones],
            tokenCounts: [...h.tokenCounts, ...tail.tokenCounts],
            values: [...h.values, ...tail.values],
            bootstrapValue: tail.bootstrapValue,
          };
          const alone = fn(h, { gamma, lambda });
          const whole = fn(joined, { gamma, lambda });
          const n = h.values.length;
          close(whole.advantages.subarray(0, n), alone.advantages);
          close(whole.returns.subarray(0, n), alone.returns);
          // ... and splitting at the done gives the same numbers for the tail too.
          const rest = fn(tail, { gamma, lambda });
          close(whole.advantages.subarray(n), rest.advantages);
          close(whole.returns.subarray(n), rest.returns);
        },
      ),
      RUNS,
    );
  });

  it('returns = advantages + values', () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, unit, (seg, gamma, lambda, intraGamma) => {
        const { advantages, returns } = tokenGae(seg, { gamma, lambda, intraGamma });
        for (let i = 0; i < seg.values.length; i++) {
          expect(returns[i]!).toBeCloseTo(advantages[i]! + seg.values[i]!, 12);
        }
      }),
      RUNS,
    );
  });

  it('writes into `out` without allocating and gives the same numbers', () => {
    fc.assert(
      fc.property(segmentArb(), unit, unit, (seg, gamma, lambda) => {
        const out = { advantages: new Float64Array(100), returns: new Float64Array(100) };
        const r = poad(seg, { gamma, lambda }, out);
        expect(r.advantages).toBe(out.advantages);
        const fresh = poad(seg, { gamma, lambda });
        close(out.advantages.subarray(0, seg.values.length), fresh.advantages);
      }),
      { numRuns: 200 },
    );
  });

  it('makeTokenGae fixes options like a named preset', () => {
    const ntpo09 = makeTokenGae({ intraGamma: 0.9 });
    fc.assert(
      fc.property(segmentArb(), unit, unit, (seg, gamma, lambda) => {
        close(
          ntpo09(seg, { gamma, lambda }).advantages,
          ntpo(seg, { gamma, lambda, intraGamma: 0.9 }).advantages,
        );
      }),
      { numRuns: 200 },
    );
  });
});
