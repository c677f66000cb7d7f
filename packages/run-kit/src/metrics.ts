import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsCsv } from './csv.js';
import { writeFileAtomicSync } from './files.js';
import type { MetricsRow } from './metrics-row.js';

export type { MetricsRow } from './metrics-row.js';

/**
 * Per-iteration metrics in a run directory: one JSON object per line in `metrics.jsonl`
 * (appended) and the same rows as `metrics.csv` (rewritten atomically, columns = union of keys).
 * After a crash, a torn last line of the JSONL file is ignored on `open`.
 */
export class MetricsLog {
  readonly rows: MetricsRow[] = [];
  private constructor(readonly dir: string) {}

  /** Opens (or creates) the log of a run directory, keeping rows with `iteration <= upTo`. */
  static open(dir: string, options: { upToIteration?: number } = {}): MetricsLog {
    const log = new MetricsLog(dir);
    const path = join(dir, 'metrics.jsonl');
    if (existsSync(path)) {
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          const row = JSON.parse(line) as MetricsRow;
          const it = row.iteration;
          if (
            options.upToIteration !== undefined &&
            typeof it === 'number' &&
            it > options.upToIteration
          )
            continue;
          log.rows.push(row);
        } catch {
          // A line cut short by a hard kill: drop it.
        }
      }
      // Rewrite so the files hold exactly the kept rows (a resume continues after them).
      writeFileAtomicSync(
        path,
        log.rows.map((r) => JSON.stringify(r)).join('\n') + (log.rows.length ? '\n' : ''),
      );
      log.writeCsv();
    }
    return log;
  }

  append(row: MetricsRow): void {
    this.rows.push(row);
    appendFileSync(join(this.dir, 'metrics.jsonl'), `${JSON.stringify(row)}\n`);
    this.writeCsv();
  }

  private writeCsv(): void {
    writeFileAtomicSync(join(this.dir, 'metrics.csv'), metricsCsv(this.rows));
  }
}
