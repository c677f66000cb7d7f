import { OptionError } from '@poad/config';

/**
 * How a run judges its best checkpoint: a metrics field, whether more or less is better, and how
 * many of the latest iterations that have the field it averages (`meanReward:max@5`). The greedy
 * success of `--eval-every` is the field `greedySuccess` (judged on the iterations that have one).
 */
export interface KeepBestRule {
  /** The metrics field (a column of metrics.jsonl, or `greedySuccess` / `greedyReturn`). */
  readonly metric: string;
  /** `max`: larger is better; `min`: smaller is better. */
  readonly direction: 'max' | 'min';
  /** Iterations averaged (1: the iteration's own value). */
  readonly window: number;
}

/** The written form of {@link KeepBestRule}: `METRIC:max|min` or `METRIC:max|min@K`. */
export const KEEP_BEST_PATTERN = /^([A-Za-z][A-Za-z0-9]*):(max|min)(?:@([1-9][0-9]*))?$/;

/**
 * Reads a `--keep-best` value (`meanReward:max`, `successRate:max@5`, `greedySuccess:max`).
 * @throws OptionError naming the value and the form it takes.
 */
export function parseKeepBest(value: string, label = '--keep-best'): KeepBestRule {
  const m = KEEP_BEST_PATTERN.exec(value);
  if (!m)
    throw new OptionError(
      `${label}: ${JSON.stringify(value)} is not METRIC:max|min[@K], e.g. meanReward:max, successRate:max@5 or greedySuccess:max`,
    );
  return { metric: m[1]!, direction: m[2] as 'max' | 'min', window: Number(m[3] ?? 1) };
}

/** The written form of a rule, as `--keep-best` takes it. */
export function formatKeepBest(rule: KeepBestRule): string {
  return `${rule.metric}:${rule.direction}${rule.window > 1 ? `@${rule.window}` : ''}`;
}

/** The best so far: its iteration and the (averaged) value that made it best. */
export interface BestSoFar {
  readonly iteration: number;
  readonly value: number;
}

/**
 * Follows a run's metrics and says when an iteration is the new best by a {@link KeepBestRule}:
 * the average of the metric over the last `window` iterations that have a finite value of it is
 * strictly better than every earlier one (ties keep the earlier). An iteration without the
 * metric, or before `window` values exist, is never best.
 */
export class BestTracker {
  private readonly values: number[] = [];
  private best: BestSoFar | null = null;
  private last: number | null = null;

  constructor(readonly rule: KeepBestRule) {}

  /** The best so far, or null. */
  get current(): BestSoFar | null {
    return this.best;
  }

  /** The latest (averaged) value, or null before `window` values exist. */
  get latest(): number | null {
    return this.last;
  }

  /**
   * Takes iteration `iteration`'s metrics row; true when it is the new best (its value is then
   * {@link current}).
   */
  observe(iteration: number, row: Readonly<Record<string, unknown>>): boolean {
    const raw = row[this.rule.metric];
    if (typeof raw !== 'number' || !Number.isFinite(raw)) return false;
    this.values.push(raw);
    if (this.values.length > this.rule.window) this.values.shift();
    if (this.values.length < this.rule.window) return false;
    const value = this.values.reduce((a, b) => a + b, 0) / this.values.length;
    this.last = value;
    const better =
      this.best === null ||
      (this.rule.direction === 'max' ? value > this.best.value : value < this.best.value);
    if (better) this.best = { iteration, value };
    return better;
  }

  /** Forgets the values averaged so far (the best stays), e.g. after a rollback. */
  resetWindow(): void {
    this.values.length = 0;
    this.last = null;
  }

  /** Replays rows of a resumed run (in order), so that the tracker is where it was. */
  replay(rows: readonly Readonly<Record<string, unknown>>[]): void {
    for (const row of rows) this.observe(Number(row.iteration), row);
  }
}
