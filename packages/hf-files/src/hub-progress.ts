/** One report of a model download, for a progress bar. */
export interface DownloadProgress {
  /** `ORG/NAME`. */
  repo: string;
  /** The file being fetched (its name in the repository). */
  file: string;
  /** `download` while bytes arrive, `verify` while hashing, `wait` while another process fetches the same file, `done` once at the end. */
  phase: 'download' | 'verify' | 'wait' | 'done';
  /** Bytes of the current file present so far (resumed bytes included). */
  fileBytes: number;
  /** Size of the current file. */
  fileTotal: number;
  /** Bytes present so far of everything this call downloads (resumed bytes included). */
  bytes: number;
  /** Size of everything this call downloads (files already in the cache are not counted). */
  total: number;
  /** Transfer rate in bytes per second over this call (resumed bytes excluded); 0 before any. */
  rate: number;
  /** Seconds left at that rate; NaN while unknown. */
  eta: number;
  /** Files finished so far, of {@link DownloadProgress.files}. */
  filesDone: number;
  /** Files this call downloads. */
  files: number;
}

/** Bytes as `512 B`, `1.5 kB`, `12.3 MB`, `4.20 GB` (powers of 1000, as the Hub shows sizes). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '--';
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

/**
 * Counts bytes and turns them into {@link DownloadProgress} reports with a rate and an ETA, at most
 * every `intervalMs` (every call to `report(true)` is passed on).
 */
export class DownloadMeter {
  total = 0;
  files = 0;
  filesDone = 0;
  /** Reports are sent only once this is true (after the plan, so that `total` no longer changes). */
  live = true;
  private bytes = 0;
  private transferred = 0;
  private started: number | undefined;
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: string,
    private readonly sink: ((p: DownloadProgress) => void) | undefined,
    private readonly now: () => number = () => Date.now(),
    private readonly intervalMs = 100,
  ) {}

  /** Bytes that arrived over the network so far. */
  get bytesTransferred(): number {
    return this.transferred;
  }

  /** Count `n` bytes that were already on disk (a resumed partial file). */
  resumed(n: number): void {
    this.bytes += n;
  }

  /** Count `n` bytes that just arrived. */
  received(n: number): void {
    this.started ??= this.now();
    this.bytes += n;
    this.transferred += n;
  }

  /** Take back `n` counted bytes (a partial file that had to be started over). */
  discard(n: number): void {
    this.bytes -= n;
  }

  /** Send a report (throttled unless `force`). */
  report(
    file: string,
    phase: DownloadProgress['phase'],
    fileBytes: number,
    fileTotal: number,
    force = false,
  ): void {
    if (this.sink === undefined || !this.live) return;
    const t = this.now();
    if (!force && t - this.last < this.intervalMs) return;
    this.last = t;
    const elapsed = this.started === undefined ? 0 : (t - this.started) / 1000;
    const rate = elapsed > 0 ? this.transferred / elapsed : 0;
    const left = Math.max(0, this.total - this.bytes);
    this.sink({
      repo: this.repo,
      file,
      phase,
      fileBytes,
      fileTotal,
      bytes: this.bytes,
      total: this.total,
      rate,
      eta: left === 0 ? 0 : rate > 0 ? left / rate : Number.NaN,
      filesDone: this.filesDone,
      files: this.files,
    });
  }
}
