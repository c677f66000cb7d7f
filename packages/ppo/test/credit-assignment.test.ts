import { beforeAll, describe, expect, it } from 'vitest';
import type { Algorithm } from '../src/index.js';
import { useCpu } from './backend.js';
import {
  type CreditExperiment,
  EXPERIMENT,
  formatExperiment,
  runExperiment,
  successOf,
} from './credit-assignment.js';
import { keyTokenTask } from './key-token-env.js';

/**
 * Evidence on the synthetic key-token task (README "Synthetic credit assignment"). The settings
 * in EXPERIMENT were fixed before any result was seen (the test critic's features were changed
 * once afterwards; the README's "History" says why). `npm run experiment` prints the full tables,
 * including NTPO's case study, which is left out here to keep the suite short.
 */
const ALGOS: Algorithm[] = ['poad', 'ntpo', 'twosome'];
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('synthetic credit assignment (5 seeds)', () => {
  let e: CreditExperiment;

  beforeAll(async () => {
    await useCpu();
    e = await runExperiment(['poad']);
    console.log(formatExperiment(e));
  }, 300_000);

  it("POAD's per-token advantages concentrate on the key token (critic-only case study)", () => {
    const key = keyTokenTask(EXPERIMENT.caseStudy.length).keyPos;
    expect(e.caseStudy).toHaveLength(EXPERIMENT.seeds.length);
    for (const r of e.caseStudy) {
      const after = r.meanAbsAdvantage.slice(key + 1);
      expect(r.meanAbsAdvantage[key]!).toBeGreaterThan(3 * mean(after));
    }
  });

  it('every algorithm raises the probability of the correct action at every length', () => {
    for (const length of EXPERIMENT.lengths) {
      for (const a of ALGOS) {
        expect(mean(successOf(e, a, length, 'final'))).toBeGreaterThan(
          mean(successOf(e, a, length, 'initial')),
        );
      }
    }
  });

  it('NTPO (γ_w = γ < 1) falls behind POAD as actions get longer', () => {
    const [short, long] = EXPERIMENT.lengths;
    const gap = (length: number) =>
      mean(successOf(e, 'poad', length, 'final')) - mean(successOf(e, 'ntpo', length, 'final'));
    expect(gap(long)).toBeGreaterThan(0);
    expect(gap(long)).toBeGreaterThan(gap(short));
  });
});
