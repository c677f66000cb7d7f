// The group-relative normalisation shared by GRPO, RLOO and both levels of GiGPO.

/** ε of the std normalisation, A = (x − mean)/(std + ε). */
export const GROUP_EPSILON = 1e-6;

/**
 * Writes out[j] = x_j − mean_g, or (x_j − mean_g)/(std_g + ε) when `std`, where g = groupOf[j]
 * (every entry is in group 0 when `groupOf` is null), mean_g and std_g are the mean and the
 * population standard deviation of group g's entries, and ε = {@link GROUP_EPSILON}.
 *
 * The mean is taken around the group's first entry, mean_g = x_first + Σ(x_j − x_first)/n_g,
 * so a group whose entries are all equal (a group of one included) gets exactly 0 in both modes.
 * Inputs are assumed valid: finite values and group ids in [0, groupCount).
 */
export function groupNormaliseKernel(
  values: ArrayLike<number>,
  groupOf: ArrayLike<number> | null,
  groupCount: number,
  std: boolean,
  out: Float64Array,
): void {
  const n = values.length;
  const count = new Float64Array(groupCount);
  const mean = new Float64Array(groupCount); // holds the first entry, then the mean
  const spread = new Float64Array(groupCount); // Σ(x − first), then Σ(x − mean)², then std + ε
  for (let j = 0; j < n; j++) {
    const g = groupOf === null ? 0 : (groupOf[j] as number);
    const x = values[j] as number;
    if (count[g] === 0) mean[g] = x;
    count[g] = (count[g] as number) + 1;
    spread[g] = (spread[g] as number) + (x - (mean[g] as number));
  }
  for (let g = 0; g < groupCount; g++) {
    if (count[g] === 0) continue;
    mean[g] = (mean[g] as number) + (spread[g] as number) / (count[g] as number);
    spread[g] = 0;
  }
  for (let j = 0; j < n; j++) {
    const g = groupOf === null ? 0 : (groupOf[j] as number);
    const d = (values[j] as number) - (mean[g] as number);
    out[j] = d;
    spread[g] = (spread[g] as number) + d * d;
  }
  if (!std) return;
  for (let g = 0; g < groupCount; g++) {
    if (count[g] === 0) continue;
    spread[g] = Math.sqrt((spread[g] as number) / (count[g] as number)) + GROUP_EPSILON;
  }
  for (let j = 0; j < n; j++) {
    const g = groupOf === null ? 0 : (groupOf[j] as number);
    out[j] = (out[j] as number) / (spread[g] as number);
  }
}
