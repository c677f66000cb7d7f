/** One row of a run's metrics (one iteration): column name → value. */
export type MetricsRow = Record<string, number | string | boolean | null>;
