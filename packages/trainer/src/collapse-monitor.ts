import { BestTracker, type KeepBestRule, parseKeepBest } from './keep-best.js';

/**
 * When a run counts as collapsing. Each check looks at the iterations' metrics rows only, so the
 * same monitor replays over an archived run's metrics.jsonl and fires where it would have fired.
 */
export interface CollapseRule {
  /**
   * The metric whose fall is watched (the run's `--keep-best` rule: its field, direction and
   * average); null: no fall is watched.
   */
  readonly watch: KeepBestRule | null;
  /** How far (absolute, in the metric's units) the average may fall below its best. */
  readonly drop: number;
  /** Iterations in a row a check must hold before the monitor fires. */
  readonly patience: number;
  /**
   * Floors of metrics fields (e.g. `labelMass`: the probability mass the policy puts on the valid
   * labels; `programsRun`: the share of programs that ran), each judged on its own value.
   */
  readonly floors: Readonly<Record<string, number>>;
  /**
   * The share of an iteration's minibatches the approximate-KL guard may skip
   * (`skippedMinibatches / minibatches`); above it, the iteration counts. 1 turns it off.
   */
  readonly maxSkipShare: number;
}

/** Why the monitor fired, once it has. */
export interface CollapseAlarm {
  /** The iteration it fired at. */
  readonly iteration: number;
  /** Which check, e.g. `meanReward` or `labelMass` or `klSkips`. */
  readonly check: string;
  /** One line for the progress line and the metrics row. */
  readonly reason: string;
}

/**
 * Watches a run's metrics rows for a collapse ({@link CollapseRule}): the watched metric's average
 * more than `drop` below its best, a floor broken, or the KL guard skipping more than
 * `maxSkipShare` of the minibatches, each for `patience` iterations in a row. It fires once per
 * spell: after an alarm a check fires again only once it has held false in between.
 */
export class CollapseMonitor {
  private readonly best: BestTracker | null;
  private readonly streaks = new Map<string, number>();
  private readonly armed = new Map<string, boolean>();

  constructor(readonly rule: CollapseRule) {
    this.best = rule.watch ? new BestTracker(rule.watch) : null;
  }

  /** Takes the next iteration's row; the alarm when the monitor fires at it, else null. */
  observe(row: Readonly<Record<string, unknown>>): CollapseAlarm | null {
    const iteration = Number(row.iteration);
    const found: { check: string; reason: string }[] = [];
    // An iteration without the watched metric (e.g. between greedy evaluations) leaves its count.
    const watched = this.rule.watch ? row[this.rule.watch.metric] : undefined;
    if (typeof watched === 'number' && Number.isFinite(watched)) {
      const fall = this.fall(iteration, row);
      this.count('fall', fall !== null, fall, found);
    }
    for (const [field, floor] of Object.entries(this.rule.floors)) {
      const v = row[field];
      const low = typeof v === 'number' && Number.isFinite(v) && v < floor;
      this.count(
        field,
        low,
        low ? `${field} ${fmt(v as number)} below the floor ${floor}` : null,
        found,
      );
    }
    const skipped = Number(row.skippedMinibatches);
    const total = Number(row.minibatches);
    const share = total > 0 && Number.isFinite(skipped) ? skipped / total : 0;
    const skips = share > this.rule.maxSkipShare;
    this.count(
      'klSkips',
      skips,
      skips
        ? `the KL guard skipped ${fmt(share * 100)}% of the minibatches (more than ${fmt(this.rule.maxSkipShare * 100)}%)`
        : null,
      found,
    );
    const first = found[0];
    if (!first) return null;
    const patience = this.rule.patience;
    return {
      iteration,
      check: first.check === 'fall' ? String(this.rule.watch?.metric) : first.check,
      reason: `${first.reason}, ${patience} iteration${patience === 1 ? '' : 's'} in a row`,
    };
  }

  /** The watched metric's fall below its best, as a reason, or null. */
  private fall(iteration: number, row: Readonly<Record<string, unknown>>): string | null {
    if (!this.best || !this.rule.watch) return null;
    const w = this.rule.watch;
    const before = this.best.current;
    this.best.observe(iteration, row);
    const value = this.best.latest;
    const best = before ?? this.best.current;
    if (value === null || best === null) return null;
    const gap = w.direction === 'max' ? best.value - value : value - best.value;
    if (!(gap > this.rule.drop)) return null;
    const avg = w.window > 1 ? ` (mean of ${w.window})` : '';
    return `${w.metric}${avg} ${fmt(value)} is ${fmt(gap)} ${w.direction === 'max' ? 'below' : 'above'} its best ${fmt(best.value)} (iteration ${best.iteration})`;
  }

  /** Counts a check's streak; records it in `found` when it reaches the patience while armed. */
  private count(
    check: string,
    holds: boolean,
    reason: string | null,
    found: { check: string; reason: string }[],
  ): void {
    if (!holds) {
      this.streaks.set(check, 0);
      this.armed.set(check, true);
      return;
    }
    const n = (this.streaks.get(check) ?? 0) + 1;
    this.streaks.set(check, n);
    if (n >= this.rule.patience && this.armed.get(check) !== false) {
      this.armed.set(check, false);
      found.push({ check, reason: reason ?? check });
    }
  }

  /**
   * After the run rolled back to its best checkpoint: every count starts again, and the watched
   * average forgets the values of the policy it left (its best stays).
   */
  afterRollback(): void {
    this.streaks.clear();
    this.armed.clear();
    this.best?.resetWindow();
  }

  /** Replays rows of a resumed run (in order), so that the monitor is where it was. */
  replay(rows: readonly Readonly<Record<string, unknown>>[]): void {
    for (const row of rows) this.observe(row);
  }
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(3);
}

/** The run options the monitor reads (see the run options of the same names). */
export interface MonitorOptions {
  readonly keepBest?: string | undefined;
  readonly collapseDrop: number;
  readonly collapsePatience: number;
  readonly collapseFloors?: string | undefined;
  readonly maxKlSkipShare: number;
}

/** A run's {@link CollapseRule} from its options: its `--keep-best` rule watched for a fall. */
export function collapseRuleOf(o: MonitorOptions): CollapseRule {
  return {
    watch: o.keepBest ? parseKeepBest(o.keepBest) : null,
    drop: o.collapseDrop,
    patience: o.collapsePatience,
    floors: Object.fromEntries(
      (o.collapseFloors ?? '')
        .split(',')
        .filter(Boolean)
        .map((f) => {
          const [field, min] = f.split(':');
          return [field!, Number(min)];
        }),
    ),
    maxSkipShare: o.maxKlSkipShare,
  };
}
