/**
 * f(z) = Σ_r wl[r]·log p_r(targets[r]) + wh[r]·H_r in float64, straight from the definition: p_r
 * is the softmax of row r of the logits z [rows, cols] and H_r its entropy.
 */
function objective(
  z: Float64Array,
  cols: number,
  targets: ArrayLike<number>,
  wl: ArrayLike<number>,
  wh: ArrayLike<number>,
): number {
  let f = 0;
  for (let r = 0; r < targets.length; r++) {
    const row = z.subarray(r * cols, (r + 1) * cols);
    const m = Math.max(...row);
    let s = 0;
    for (const x of row) s += Math.exp(x - m);
    const lse = m + Math.log(s);
    let h = 0;
    for (const x of row) h -= Math.exp(x - lse) * (x - lse);
    f += wl[r]! * (row[targets[r]!]! - lse) + wh[r]! * h;
  }
  return f;
}

/**
 * The gradient in z of Σ_r wl[r]·log p_r(targets[r]) + wh[r]·H_r (p_r the softmax of row r of
 * the logits z [rows, cols], H_r its entropy) by float64 central differences of that definition,
 * step 1e-6: an oracle for the written-out gradients of the log-prob statistics that shares no
 * code with them. `targets`, `wl` and `wh` have one entry per row, each target in [0, cols).
 */
export function logProbStatsGradientF64(
  z: ArrayLike<number>,
  rows: number,
  cols: number,
  targets: ArrayLike<number>,
  wl: ArrayLike<number>,
  wh: ArrayLike<number>,
): Float64Array {
  if (z.length !== rows * cols || targets.length !== rows) {
    throw new RangeError(
      `logProbStatsGradientF64: z needs rows·cols = ${rows * cols} values and targets ${rows}, got ${z.length} and ${targets.length}`,
    );
  }
  const at = Float64Array.from(z);
  const g = new Float64Array(at.length);
  const eps = 1e-6;
  for (let i = 0; i < at.length; i++) {
    const x = at[i]!;
    at[i] = x + eps;
    const plus = objective(at, cols, targets, wl, wh);
    at[i] = x - eps;
    const minus = objective(at, cols, targets, wl, wh);
    at[i] = x;
    g[i] = (plus - minus) / (2 * eps);
  }
  return g;
}
