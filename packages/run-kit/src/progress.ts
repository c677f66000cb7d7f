/** Formats seconds as `1h02m`, `3m05s` or `42s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s >= 3600)
    return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

export interface ProgressOptions {
  total: number;
  label?: string;
  unit?: string;
  /** Where to draw; default process.stderr. */
  stream?: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean; columns?: number };
  /** Without a TTY a plain line is printed at most this often. Default 10 s. */
  lineIntervalMs?: number;
  /** Clock in ms (for tests). */
  now?: () => number;
  /**
   * Writes the done and total counts, e.g. bytes as `12.3 MB` (default: the integer as it is).
   * The unit follows the formatted pair, so a formatter that writes its own unit needs none.
   */
  format?: (n: number) => string;
}

/**
 * A progress bar with ETA and live fields (e.g. return and success rate). On a terminal it
 * redraws one line; otherwise (CI, log files) it prints a plain line now and then.
 */
export class ProgressBar {
  private readonly start: number;
  private lastLine = 0;
  private readonly now: () => number;
  private readonly stream: NonNullable<ProgressOptions['stream']>;
  private startDone = 0;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? (() => Date.now());
    this.start = this.now();
    this.stream = options.stream ?? process.stderr;
  }

  /** Marks where a resumed run started, so the ETA uses only this process's speed. */
  resumeFrom(done: number): void {
    this.startDone = done;
  }

  /** Renders the bar for `done` units with extra `fields`; returns the text drawn. */
  update(done: number, fields: Record<string, string | number> = {}): string {
    const { total } = this.options;
    const elapsed = (this.now() - this.start) / 1000;
    const rate = (done - this.startDone) / Math.max(elapsed, 1e-9);
    const eta = rate > 0 ? (total - done) / rate : Number.NaN;
    const frac = total > 0 ? Math.min(1, done / total) : 1;
    const width = 24;
    const filled = Math.round(frac * width);
    const extra = Object.entries(fields)
      .map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v) : v}`)
      .join(' | ');
    const count = this.options.format ?? String;
    const text = `${this.options.label ? `${this.options.label} ` : ''}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}% ${count(done)}/${count(total)}${this.options.unit ? ` ${this.options.unit}` : ''} | ${formatDuration(elapsed)} elapsed, ETA ${formatDuration(eta)}${extra ? ` | ${extra}` : ''}`;
    if (this.stream.isTTY) {
      const cols = (this.stream as { columns?: number }).columns ?? 120;
      this.stream.write(`\r${text.slice(0, cols - 1).padEnd(cols - 1)}`);
    } else if (
      this.now() - this.lastLine >= (this.options.lineIntervalMs ?? 10_000) ||
      done >= total
    ) {
      this.stream.write(`${text}\n`);
      this.lastLine = this.now();
    }
    return text;
  }

  /** Ends the line on a terminal. */
  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

function formatNumber(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}
