import { CreditArgumentError } from './errors.js';

/** Values per state id. */
export type StateValues = Readonly<Record<string, number>>;

/** Values per state id and label. */
export type LabelValues = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** Tolerance within which two labels count as equally good. */
export const TIE_TOLERANCE = 1e-9;

/**
 * The entry of `label` in state `stateId` of a per-state, per-label table of task `id`, for the
 * function `fn`. Throws a {@link CreditArgumentError} naming the valid states or labels when
 * `stateId` or `label` is not in the table.
 */
export function labelEntry<T>(
  table: Readonly<Record<string, Readonly<Record<string, T>>>>,
  id: string,
  fn: string,
  stateId: string,
  label: string,
): T {
  const row = Object.hasOwn(table, stateId) ? table[stateId] : undefined;
  if (!row) {
    throw new CreditArgumentError(
      `${fn}(stateId)`,
      `${id} has no state ${JSON.stringify(stateId)}; its states are ${Object.keys(table).join(', ')} (take the id from the step's info.state).`,
    );
  }
  if (!Object.hasOwn(row, label)) {
    const labels = Object.keys(row);
    throw new CreditArgumentError(
      `${fn}(label)`,
      labels.length === 0
        ? `state ${JSON.stringify(stateId)} of ${id} is terminal and has no labels.`
        : `state ${JSON.stringify(stateId)} of ${id} has no label ${JSON.stringify(label)}; its labels are ${labels.map((l) => JSON.stringify(l)).join(', ')}.`,
    );
  }
  return row[label]!;
}
