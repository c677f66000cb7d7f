import type { MetricsRow } from './metrics-row.js';

/**
 * Metrics rows as CSV text: the columns are the union of the rows' keys in order of first
 * appearance; empty cells for null or missing values; cells with commas, quotes or newlines
 * quoted.
 */
export function metricsCsv(rows: readonly MetricsRow[]): string {
  const cols: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cell = (v: unknown) => {
    if (v === null || v === undefined) return '';
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [cols.join(','), ...rows.map((r) => cols.map((c) => cell(r[c])).join(','))];
  return `${lines.join('\n')}\n`;
}
