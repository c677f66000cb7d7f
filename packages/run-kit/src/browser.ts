/**
 * `@poad/run-kit` without Node built-ins (the package's `browser` export condition): charts as
 * SVG text and metrics as CSV text (options: `@poad/config`). Run directories, checkpoints, locks, PNG
 * output and the progress bar are Node only.
 */

export { metricsCsv } from './csv.js';
export type { MetricsRow } from './metrics-row.js';
export type { LineChart, Series, TokenCreditRow } from './plot.js';
export { lineChartSvg, ticks, tokenCreditSvg } from './plot.js';
