/** Values per state id. */
export type StateValues = Readonly<Record<string, number>>;

/** Values per state id and label. */
export type LabelValues = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** Tolerance within which two labels count as equally good. */
export const TIE_TOLERANCE = 1e-9;
