import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bestOfKSeries, figureSvg } from '../scripts/figures.js';

const base = mkdtempSync(join(tmpdir(), 'poad-figures-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** One `npm run heldout` report: the POAD runs' best-of-k curves and one prior seed's. */
function report(name: string, runs: number[][], prior: number[] | null): string {
  const summaries = runs.map((bestOfK, i) => ({
    source: `poad-s${21 + i}`,
    ran: 1,
    meanAuc: bestOfK[0],
    bestOfK,
  }));
  if (prior) summaries.push({ source: 'prior', ran: 1, meanAuc: prior[0]!, bestOfK: prior });
  writeFileSync(join(base, name), JSON.stringify({ dataset: 'kiln_batches', summaries }));
  return name;
}

describe('bestOfKSeries (the held-out best-of-k figure)', () => {
  // Two POAD runs (the second with a shorter curve) and two prior seeds.
  const runs = [
    [0.6, 0.7, 0.8],
    [0.8, 0.9],
  ];
  const files = [
    report('r1.json', runs, [0.5, 0.6, 0.65, 0.7]),
    report('r2.json', runs, [0.7, 0.8, 0.85, 0.9]),
  ];

  it('averages each arm over its seeds at every k, up to its shortest curve, against log2 k', () => {
    const { dataset, series } = bestOfKSeries(files.map((f) => join(base, f)));
    expect(dataset).toBe('kiln_batches');
    const [poad, prior] = series;
    expect(poad!.name).toBe('poad (2 seeds)');
    expect(poad!.points.map(([x]) => x)).toEqual([0, 1]);
    expect(poad!.points.map(([, y]) => y)).toEqual([expect.closeTo(0.7), expect.closeTo(0.8)]);
    // Population standard deviation, as the comparison reports' bands.
    expect(poad!.spread).toEqual([expect.closeTo(0.1), expect.closeTo(0.1)]);
    expect(prior!.name).toBe('prior (2 seeds)');
    expect(prior!.dashed).toBe(true);
    expect(prior!.points.map(([x]) => x)).toEqual([0, 1, Math.log2(3), 2]);
    expect(prior!.points.map(([, y]) => y)).toEqual(
      [0.6, 0.7, 0.75, 0.8].map((y) => expect.closeTo(y)),
    );
  });

  it('draws them as a chart, and names a report without a prior', () => {
    const svg = figureSvg({ file: 'x.png', chart: 'bestOfK', reports: files }, base);
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain('kiln_batches: expected best held-out ROC AUC among k programs');
    expect(svg).toContain('poad (2 seeds)');
    expect(svg).toContain('prior (2 seeds)');
    const bare = report('r3.json', runs, null);
    expect(() =>
      figureSvg({ file: 'x.png', chart: 'bestOfK', reports: [files[0]!, bare] }, base),
    ).toThrow(/r3\.json has no prior/);
  });
});
