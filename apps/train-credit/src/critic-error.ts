// How far an iteration's critic was from the exact values: the values its rollout recorded (the
// ones its targets and advantages used) beside the exact ones, at every token prefix of every
// chosen action, and their RMSE, bias and Spearman's ρ.
import { type CriticError, criticError } from '@poad/bellman';
import { prefixValuesOf, type TokenPrefixValues } from '@poad/envs-credit';

/** What the measurement reads of a rollout buffer (`RolloutBuffer` of `@poad/ppo`). */
export interface RecordedValues {
  readonly size: number;
  /** The critic's value before every action token, flat, aligned with the action ids. */
  readonly values: ArrayLike<number>;
  readonly actionOffsets: ArrayLike<number>;
  action(i: number): ArrayLike<number>;
}

/** The values at every measured position of a rollout, step by step. */
export interface PrefixValuePairs {
  /**
   * Per step: the critic's values the advantages used, V(s, w_<k) before each token k of the
   * chosen action (`level: 'token'`), or V(s) alone (`'action'`, TWOSOME's critic).
   */
  readonly value: number[][];
  /** Per step: the exact values at the same positions (from the table). */
  readonly exact: number[][];
}

/**
 * Pairs each step's recorded values with the exact values of its state and chosen label in
 * `table` (entry k, the value before token k; a table's last entry, the value after the last
 * token, is never a critic's). `steps[i]` names step i's state and label; the step's action ids
 * must be the ids the table holds for that label (`prefixValuesOf` checks them), so a prefix
 * cannot be shifted by a different tokenisation.
 */
export function prefixValuePairs(
  buffer: RecordedValues,
  steps: readonly { readonly state: string; readonly label: string }[],
  table: TokenPrefixValues,
  level: 'token' | 'action',
): PrefixValuePairs {
  if (steps.length !== buffer.size)
    throw new RangeError(
      `prefixValuePairs: ${steps.length} steps named for a rollout of ${buffer.size}; name one state and label per step`,
    );
  const value: number[][] = [];
  const exact: number[][] = [];
  steps.forEach(({ state, label }, i) => {
    const ids = buffer.action(i);
    const row = prefixValuesOf(table, state, label, ids);
    const n = level === 'token' ? ids.length : 1;
    const first = buffer.actionOffsets[i]!;
    value.push(Array.from({ length: n }, (_, k) => buffer.values[first + k]!));
    exact.push(Array.from(row.subarray(0, n)));
  });
  return { value, exact };
}

/**
 * RMSE, bias (critic − exact) and Spearman's ρ pooled over every position of `pairs`
 * (`criticError` of `@poad/bellman`); NaN figures when a critic value is not finite (a diverged
 * critic has no error to rank).
 */
export function pooledCriticError(pairs: PrefixValuePairs): CriticError {
  const value = pairs.value.flat();
  const exact = pairs.exact.flat();
  if (!value.every(Number.isFinite))
    return { count: 0, skipped: value.length, rmse: NaN, bias: NaN, spearman: NaN };
  return criticError(value, exact);
}
