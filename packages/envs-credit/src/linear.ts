/**
 * Solves the n×n system A·x = b in place by Gaussian elimination with partial pivoting.
 * `a` is row-major (n·n entries) and is overwritten, as is `b`, which ends holding x. Returns
 * the index of a column without a usable pivot (|pivot| ≤ 1e-12 after elimination, a singular
 * or nearly singular system) or -1 on success.
 */
export function solveInPlace(a: Float64Array, b: Float64Array, n: number): number {
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) {
      if (Math.abs(a[r * n + col]!) > Math.abs(a[pivot * n + col]!)) pivot = r;
    }
    if (!(Math.abs(a[pivot * n + col]!) > 1e-12)) return col;
    if (pivot !== col) {
      for (let c = 0; c < n; c++) {
        const t = a[col * n + c]!;
        a[col * n + c] = a[pivot * n + c]!;
        a[pivot * n + c] = t;
      }
      const t = b[col]!;
      b[col] = b[pivot]!;
      b[pivot] = t;
    }
    const p = a[col * n + col]!;
    for (let r = col + 1; r < n; r++) {
      const f = a[r * n + col]! / p;
      if (f === 0) continue;
      for (let c = col; c < n; c++) a[r * n + c] = a[r * n + c]! - f * a[col * n + c]!;
      b[r] = b[r]! - f * b[col]!;
    }
  }
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!;
    for (let c = r + 1; c < n; c++) s -= a[r * n + c]! * b[c]!;
    b[r] = s / a[r * n + r]!;
  }
  return -1;
}
