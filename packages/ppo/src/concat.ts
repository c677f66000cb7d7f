/** Writes `parts` one after another into `out`, from index 0, and returns `out`. */
export function concatInto<T extends Float32Array | Int32Array>(
  out: T,
  parts: readonly ArrayLike<number>[],
): T {
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
