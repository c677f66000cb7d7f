import { lineChartSvg, type MetricsRow } from '@poad/run-kit';

/** Mean of the last `k` values ending at each index (the curve shown while training). */
export function runningMean(values: readonly number[], k = 5): number[] {
  return values.map((_, i) => {
    const window = values.slice(Math.max(0, i - k + 1), i + 1).filter(Number.isFinite);
    return window.length ? window.reduce((a, b) => a + b, 0) / window.length : Number.NaN;
  });
}

/**
 * The learning curve of metrics rows as SVG text: episodic return and success rate (running
 * means over iterations with finished episodes) against environment steps.
 */
export function learningCurveSvg(rows: readonly MetricsRow[], title: string): string {
  const useful = rows.filter(
    (r) => typeof r.episodeReturn === 'number' && Number.isFinite(r.episodeReturn),
  );
  const x = useful.map((r) => Number(r.envSteps));
  const ret = runningMean(useful.map((r) => Number(r.episodeReturn)));
  const succ = runningMean(useful.map((r) => Number(r.successRate)));
  const series = [
    { name: 'episodic return', points: x.map((v, i) => [v, ret[i]!] as [number, number]) },
  ];
  if (
    useful.some(
      (r) => typeof r.successRate === 'number' && Number.isFinite(r.successRate as number),
    )
  ) {
    series.push({
      name: 'success rate',
      points: x
        .map((v, i) => [v, succ[i]!] as [number, number])
        .filter((p) => Number.isFinite(p[1])),
    });
  }
  return lineChartSvg({
    title,
    xLabel: 'environment steps',
    yLabel: 'return / success (running mean)',
    series,
  });
}
