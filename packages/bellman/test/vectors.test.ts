import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { actionGae, archer, ntpo, poad } from '../src/index.js';

interface Vector {
  id: string;
  algo: 'POAD' | 'NTPO' | 'ARCHER' | 'ACTION_GAE';
  gamma: number;
  lam: number;
  tok?: number[][];
  V: number[][] | number[];
  r: number[];
  m_next: number[];
  V_boot: number;
  A: number[][] | number[];
  R: number[][] | number[];
}

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/vectors.json', import.meta.url), 'utf8'),
) as { token_and_action_gae: Vector[] };

/** Converts the padded [T][L] layout of the spec (pad id 0) into our ragged layout. */
function toSegment(v: Vector) {
  const tok = v.tok as number[][];
  const V = v.V as number[][];
  const tokenCounts = tok.map((row) => {
    let last = row.length - 1;
    while (last >= 0 && row[last] === 0) last--;
    return last + 1;
  });
  const values = V.flatMap((row, t) => row.slice(0, tokenCounts[t]));
  return {
    rewards: v.r,
    dones: v.m_next.map((m) => m === 0),
    tokenCounts,
    values,
    bootstrapValue: v.V_boot,
  };
}

const fns = { POAD: poad, NTPO: ntpo, ARCHER: archer };

describe('algorithms.md §7 reference vectors', () => {
  it('has every vector of the specification', () => {
    expect(fixture.token_and_action_gae.length).toBe(16);
  });
  for (const v of fixture.token_and_action_gae) {
    it(`${v.id} reproduces to 1e-6`, () => {
      if (v.algo === 'ACTION_GAE') {
        const out = actionGae(
          {
            rewards: v.r,
            dones: v.m_next.map((m) => 1 - m),
            values: v.V as number[],
            bootstrapValue: v.V_boot,
          },
          { gamma: v.gamma, lambda: v.lam },
        );
        expectClose(Array.from(out.advantages), v.A as number[]);
        expectClose(Array.from(out.returns), v.R as number[]);
        return;
      }
      const out = fns[v.algo](toSegment(v), { gamma: v.gamma, lambda: v.lam });
      expectClose(Array.from(out.advantages), (v.A as number[][]).flat());
      expectClose(Array.from(out.returns), (v.R as number[][]).flat());
    });
  }
});

function expectClose(actual: number[], expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((x, i) => {
    expect(
      Math.abs(x - (expected[i] as number)),
      `index ${i}: ${x} vs ${expected[i]}`,
    ).toBeLessThan(1e-6);
  });
}
