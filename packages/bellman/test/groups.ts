// Shared pieces of the group-advantage tests: arbitraries, a plain reference and honest
// rounding tolerances.
import fc from 'fast-check';

/** The unit roundoff of float64, 2^-53. */
export const U = Number.EPSILON / 2;
/** ε of the std normalisation. */
export const EPS = 1e-6;

/** Mean and population std by the textbook two-pass formulas. */
export function stats(x: readonly number[]): { mean: number; std: number } {
  let sum = 0;
  for (const v of x) sum += v;
  const mean = sum / x.length;
  let ss = 0;
  for (const v of x) ss += (v - mean) ** 2;
  return { mean, std: Math.sqrt(ss / x.length) };
}

/** (x − mean)/(std + ε) or x − mean, by {@link stats}. */
export function refNormalise(x: readonly number[], normalise: 'std' | 'none'): number[] {
  const { mean, std } = stats(x);
  return x.map((v) => (normalise === 'std' ? (v - mean) / (std + EPS) : v - mean));
}

/**
 * A bound on the rounding error of a centred (and maybe std-scaled) group of n values of
 * magnitude at most `maxAbs` with population std `std`: every deviation x − mean is off by at
 * most a few (n + 1)·u·maxAbs, and the std division multiplies that by (1 + √n)/(std + ε).
 */
export function groupTol(n: number, maxAbs: number, std: number, normalise: 'std' | 'none') {
  // (1e-300: an absolute floor for subnormal inputs, whose rounding is not relative.)
  const centred = 8 * (n + 1) * U * maxAbs + 1e-300;
  return normalise === 'std' ? (centred * (1 + Math.sqrt(n))) / (std + EPS) : centred;
}

export const maxAbs = (x: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i] as number));
  return m;
};

/** Expects |a_i − b_i| <= tol for every i, naming the index. */
export function expectWithin(a: ArrayLike<number>, b: ArrayLike<number>, tol: number): void {
  if (a.length !== b.length) throw new Error(`lengths ${a.length} and ${b.length} differ`);
  for (let i = 0; i < a.length; i++) {
    const diff = Math.abs((a[i] as number) - (b[i] as number));
    if (!(diff <= tol)) {
      throw new Error(`index ${i}: ${a[i]} vs ${b[i]} differ by ${diff} > ${tol}`);
    }
  }
}

/** Returns of a group of 1..16 episodes: spread-out reals, small integers (ties), 0/1 success. */
export function returnsArb(minLength = 1) {
  const opts = { minLength, maxLength: 16 };
  return fc.oneof(
    fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), opts),
    fc.array(fc.integer({ min: -2, max: 2 }), opts),
    fc.array(fc.constantFrom(0, 1), opts),
  );
}

export const normaliseArb = fc.constantFrom('std' as const, 'none' as const);
export const RUNS = { numRuns: 300 };
