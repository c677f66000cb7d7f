// The critic's error of an iteration, on a hand-computed case: which recorded value is paired
// with which exact value, and the RMSE, bias and Spearman's ρ of the pairs.
import type { TokenPrefixValues } from '@poad/envs-credit';
import { describe, expect, it } from 'vitest';
import { pooledCriticError, prefixValuePairs, type RecordedValues } from '../src/critic-error.js';

/**
 * Two states. s0 offers "grab bread" (ids 1 2) and "wait" (4); s1 offers "go" (5 6 7). The
 * exact values before each token, then after the last one:
 *   s0 "grab bread": 0.4 (V(s0)), 0.3 (after "grab"), 0.1 (Q)
 *   s0 "wait":       0.4, 0.7 (Q)
 *   s1 "go":         1.0 (V(s1)), 0.8, 0.6, 0.5 (Q)
 */
const table: TokenPrefixValues = {
  id: 'hand',
  kind: 'policy',
  gamma: 0.9,
  beta: 0,
  v: { s0: 0.4, s1: 1 },
  q: { s0: { 'grab bread': 0.1, wait: 0.7 }, s1: { go: 0.5 } },
  tokens: {
    s0: { 'grab bread': Int32Array.of(1, 2), wait: Int32Array.of(4) },
    s1: { go: Int32Array.of(5, 6, 7) },
  },
  prefixes: {
    s0: { 'grab bread': Float64Array.of(0.4, 0.3, 0.1), wait: Float64Array.of(0.4, 0.7) },
    s1: { go: Float64Array.of(1, 0.8, 0.6, 0.5) },
  },
  undefinedPrefixes: 0,
};

/** A rollout of three steps: s0 "grab bread", s1 "go", s0 "wait", with the critic's values. */
function rollout(actions: number[][], values: number[]): RecordedValues {
  const offsets = [0];
  for (const a of actions) offsets.push(offsets.at(-1)! + a.length);
  const flat = actions.flat();
  return {
    size: actions.length,
    values: Float32Array.from(values),
    actionOffsets: Int32Array.from(offsets),
    action: (i) => Int32Array.from(flat.slice(offsets[i]!, offsets[i + 1]!)),
  };
}
const steps = [
  { state: 's0', label: 'grab bread' },
  { state: 's1', label: 'go' },
  { state: 's0', label: 'wait' },
];
// V before each token: step 0 (0.6, 0.1), step 1 (1.2, 0.8, 0.9), step 2 (0.2).
const buffer = rollout([[1, 2], [5, 6, 7], [4]], [0.6, 0.1, 1.2, 0.8, 0.9, 0.2]);

describe('the critic error of a rollout', () => {
  it('pairs the value before each token with the exact value before it (token level)', () => {
    const pairs = prefixValuePairs(buffer, steps, table, 'token');
    expect(pairs.value).toEqual([[0.6, 0.1], [1.2, 0.8, 0.9], [0.2]].map(f32));
    expect(pairs.exact).toEqual([[0.4, 0.3], [1, 0.8, 0.6], [0.4]]);
    // V − V^π = 0.2, −0.2, 0.2, 0, 0.3, −0.2: Σ = 0.3, Σ² = 0.25 over 6 positions.
    const e = pooledCriticError(pairs);
    expect(e.count).toBe(6);
    expect(e.rmse).toBeCloseTo(Math.sqrt(0.25 / 6), 6);
    expect(e.bias).toBeCloseTo(0.05, 6);
    // Ranks of V (3, 1, 6, 4, 5, 2) and of V^π (2.5, 1, 6, 5, 4, 2.5): ρ = 16 / √(17.5 · 17).
    expect(e.spearman).toBeCloseTo(16 / Math.sqrt(17.5 * 17), 10);
  });

  it('reads only V(s) for an action-level critic', () => {
    const pairs = prefixValuePairs(buffer, steps, table, 'action');
    expect(pairs.value).toEqual([[0.6], [1.2], [0.2]].map(f32));
    expect(pairs.exact).toEqual([[0.4], [1], [0.4]]);
    const e = pooledCriticError(pairs);
    // 0.2, 0.2, −0.2; ranks (2, 3, 1) against (1.5, 3, 1.5): ρ = 1.5 / √(2 · 1.5).
    expect(e.rmse).toBeCloseTo(0.2, 6);
    expect(e.bias).toBeCloseTo(0.2 / 3, 6);
    expect(e.spearman).toBeCloseTo(1.5 / Math.sqrt(3), 10);
  });

  it('the bias is critic minus exact: an under-valuing critic has a negative one', () => {
    const low = rollout([[1, 2], [5, 6, 7], [4]], [0.2, 0.5, 0.8, 0.8, 0.3, 0.6]);
    // The same errors with the signs flipped.
    expect(pooledCriticError(prefixValuePairs(low, steps, table, 'token')).bias).toBeCloseTo(
      -0.05,
      6,
    );
  });

  it("refuses a step whose ids are not the table's for its label (no shifted prefixes)", () => {
    const shifted = rollout([[2, 1], [5, 6, 7], [4]], [0.6, 0.1, 1.2, 0.8, 0.9, 0.2]);
    expect(() => prefixValuePairs(shifted, steps, table, 'token')).toThrow(
      /the step's ids \[2, 1\] are not the ids \[1, 2\]/,
    );
    expect(() => prefixValuePairs(buffer, steps.slice(1), table, 'token')).toThrow(
      /2 steps named for a rollout of 3/,
    );
  });

  it('a critic that is not finite has NaN figures instead of an error', () => {
    const bad = rollout([[1, 2], [5, 6, 7], [4]], [Number.NaN, 0.1, 1.2, 0.8, 0.9, 0.2]);
    const e = pooledCriticError(prefixValuePairs(bad, steps, table, 'token'));
    expect(e.rmse).toBeNaN();
    expect(e.spearman).toBeNaN();
  });
});

/** Numbers as float32 (the buffer's precision) and back. */
function f32(xs: number[]): number[] {
  return Array.from(Float32Array.from(xs));
}
