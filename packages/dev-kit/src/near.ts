import { expect } from 'vitest';

/**
 * Expects `got` to equal `want` within `tol`, relative to |want| where that is above 1 and
 * absolute below: |got − want| ≤ tol·max(1, |want|). The failure shows both values.
 */
export function expectNear(got: number, want: number, tol = 1e-9): void {
  expect(Math.abs(got - want), `${got} vs ${want}`).toBeLessThanOrEqual(
    tol * Math.max(1, Math.abs(want)),
  );
}
