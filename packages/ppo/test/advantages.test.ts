import { describe, expect, it } from 'vitest';
import { type Algorithm, computeAdvantages, type PpoConfig, resolveConfig } from '../src/index.js';
import fixture from './fixtures/algorithms-s7.json';
import { bufferFromVector } from './helpers.js';

const ALGO: Record<string, Algorithm> = {
  POAD: 'poad',
  NTPO: 'ntpo',
  ARCHER: 'archer',
  ACTION_GAE: 'twosome',
};

describe('computeAdvantages reproduces the §7 token- and action-level vectors through the buffer', () => {
  for (const v of fixture.token_and_action_gae) {
    it(v.id, () => {
      const algorithm = ALGO[v.algo]!;
      const action = algorithm === 'twosome';
      const tok = (v as { tok?: number[][] }).tok;
      const tokenCounts = action
        ? v.r.map(() => 1)
        : tok!.map((row) => row.reduce((last, id, k) => (id !== 0 ? k + 1 : last), 0));
      const values = action ? (v.V as number[]).map((x) => [x]) : (v.V as number[][]);
      const buffer = bufferFromVector({
        tokenCounts,
        values,
        rewards: v.r,
        dones: v.m_next.map((m) => m === 0),
        bootstrap: v.V_boot,
      });
      const cfg = resolveConfig({ algorithm, gamma: v.gamma, gaeLambda: v.lam });
      const out = computeAdvantages(buffer, cfg);
      const flatA = (v.A as number[] | number[][]).flat();
      const flatR = (v.R as number[] | number[][]).flat();
      expect(out.level).toBe(action ? 'action' : 'token');
      expect(out.advantages.length).toBe(flatA.length);
      for (const [i, a] of flatA.entries()) expect(out.advantages[i]).toBeCloseTo(a, 5);
      for (const [i, r] of flatR.entries()) expect(out.returns[i]).toBeCloseTo(r, 5);
    });
  }
});

describe('truncation', () => {
  // Single-token actions, γ = 0.9, λ = 1; step 0 is truncated with V(final observation) = 3.
  const base = {
    tokenCounts: [1, 1],
    values: [[0.5], [0.2]],
    rewards: [1, 2],
    dones: [false, false],
    truncated: [true, false],
    finalValues: [3, Number.NaN],
    bootstrap: 4,
  };
  const cfg = (truncationAsTermination: boolean, algorithm: Algorithm = 'poad') =>
    resolveConfig({ algorithm, gamma: 0.9, gaeLambda: 1, truncationAsTermination });

  for (const algorithm of ['poad', 'ntpo', 'archer', 'twosome'] as const) {
    it(`${algorithm}: bootstraps a truncated step from V(final observation) and cuts the trace`, () => {
      const out = computeAdvantages(bufferFromVector(base), cfg(false, algorithm));
      expect(out.advantages[0]).toBeCloseTo(1 + 0.9 * 3 - 0.5, 6); // 3.2
      expect(out.advantages[1]).toBeCloseTo(2 + 0.9 * 4 - 0.2, 6); // 5.4
    });
  }
  it('truncationAsTermination reproduces the original code (no bootstrap)', () => {
    const out = computeAdvantages(bufferFromVector(base), cfg(true));
    expect(out.advantages[0]).toBeCloseTo(1 - 0.5, 6);
    expect(out.advantages[1]).toBeCloseTo(5.4, 6);
  });
  it('a step both terminated and truncated is a termination', () => {
    const out = computeAdvantages(bufferFromVector({ ...base, dones: [true, false] }), cfg(false));
    expect(out.advantages[0]).toBeCloseTo(0.5, 6);
  });
  it('a truncated last step bootstraps from V(final observation), not V(o_T)', () => {
    const out = computeAdvantages(
      bufferFromVector({ ...base, truncated: [false, true], finalValues: [Number.NaN, 7] }),
      cfg(false),
    );
    expect(out.advantages[1]).toBeCloseTo(2 + 0.9 * 7 - 0.2, 6);
  });
});

/** The §7 vector poad_t3_done_after_0 (three actions, a done after the first) as a buffer. */
const t3Buffer = (() => {
  const v = fixture.token_and_action_gae.find((x) => x.id === 'poad_t3_done_after_0')!;
  return bufferFromVector({
    tokenCounts: v.tok!.map((row) => row.filter((id) => id !== 0).length),
    values: v.V as number[][],
    rewards: v.r,
    dones: v.m_next.map((m) => m === 0),
    bootstrap: v.V_boot,
  });
})();

/** The advantages of the T3 buffer with γ = λ = 0.95 and `config`'s other settings. */
const t3Advantages = (algorithm: Algorithm, config: Partial<PpoConfig>) =>
  computeAdvantages(
    t3Buffer,
    resolveConfig({ algorithm, gamma: 0.95, gaeLambda: 0.95, ...config }),
  );

describe('NTPO intra-action discount', () => {
  const run = (algorithm: Algorithm, intraGamma: number | undefined) =>
    t3Advantages(algorithm, { intraGamma });
  it('γ_w = 1 turns NTPO into POAD; the default γ_w = γ gives the NTPO vector', () => {
    expect(Array.from(run('ntpo', 1).advantages)).toEqual(
      Array.from(run('poad', undefined).advantages),
    );
    const ntpo = fixture.token_and_action_gae.find((x) => x.id === 'ntpo_t3_done_after_0')!;
    for (const [i, a] of (ntpo.A as number[][]).flat().entries()) {
      expect(run('ntpo', undefined).advantages[i]).toBeCloseTo(a, 5);
    }
  });
  it('intraGamma is ignored by POAD', () => {
    expect(Array.from(run('poad', 0.5).advantages)).toEqual(
      Array.from(run('poad', undefined).advantages),
    );
  });
});

describe('inner-action λ (intraLambda)', () => {
  const buffer = t3Buffer;
  const run = (algorithm: Algorithm, intraLambda: number | undefined) =>
    t3Advantages(algorithm, { intraLambda });
  it('unset is λ; λ_w = 1 gives POAD the action-level GAE at first tokens (TWOSOME on first-token values)', () => {
    expect(Array.from(run('poad', 0.95).advantages)).toEqual(
      Array.from(run('poad', undefined).advantages),
    );
    const one = run('poad', 1).advantages;
    const action = computeAdvantages(
      buffer,
      resolveConfig({ algorithm: 'twosome', gamma: 0.95, gaeLambda: 0.95 }),
    ).advantages;
    for (let i = 0; i < buffer.size; i++)
      expect(one[buffer.actionOffsets[i]!]).toBeCloseTo(action[i]!, 12);
    // It changes something: with λ_w = λ the first tokens differ where actions have several tokens.
    const lam = run('poad', undefined).advantages;
    expect(
      Array.from({ length: buffer.size }, (_, i) => buffer.actionOffsets[i]!).some(
        (k, i) => Math.abs(lam[k]! - action[i]!) > 1e-6,
      ),
    ).toBe(true);
    expect(() => resolveConfig({ intraLambda: 1.5 })).toThrow(/intraLambda/);
  });
});
