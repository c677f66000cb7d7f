// What a queued run is: its sweep, its name, the code version it was queued from and its payload.
import type { CodeVersion } from './code-version.js';

/** The queue every sweep and worker uses unless told otherwise. */
export const DEFAULT_QUEUE = 'poad-sweeps';

/** The data of one job on the queue. */
export interface SweepJobData<P = unknown> {
  /** The sweep it belongs to (e.g. the comparison folder's name). */
  readonly sweep: string;
  /** The run's name, unique in its sweep. */
  readonly name: string;
  /** The code version the sweep was queued from. */
  readonly version: CodeVersion;
  /** What the worker needs to train it. */
  readonly payload: P;
}

/** Names and sweep ids: letters, digits and . _ - @ + (Redis keys are joined with ':'). */
const ID = /^[A-Za-z0-9._@+-]+$/;

/** The job id of run `name` of `sweep`. */
export function jobIdOf(sweep: string, name: string): string {
  for (const [what, value] of [
    ['sweep id', sweep],
    ['run name', name],
  ] as const) {
    if (!ID.test(value))
      throw new TypeError(
        `${what} ${JSON.stringify(value)}: use letters, digits and . _ @ + - only (it becomes part of a Redis key)`,
      );
  }
  return `${sweep}.${name}`;
}

/** Whether `data` has the shape of a {@link SweepJobData} (its payload is not checked). */
export function isSweepJobData(data: unknown): data is SweepJobData {
  const d = data as Partial<SweepJobData> | null;
  return (
    !!d &&
    typeof d === 'object' &&
    typeof d.sweep === 'string' &&
    typeof d.name === 'string' &&
    'payload' in d
  );
}
