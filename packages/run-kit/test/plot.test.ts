import { describe, expect, it } from 'vitest';
import { legendCorner, lineChartSvg, ticks, tokenCreditSvg } from '../src/plot.js';
import { svgToPng } from '../src/png.js';
import { formatDuration, ProgressBar } from '../src/progress.js';

describe('plots', () => {
  const chart = {
    title: 'Return <vs> steps',
    xLabel: 'env steps',
    yLabel: 'return',
    series: [
      {
        name: 'poad',
        points: [
          [0, 0],
          [100, 0.5],
          [200, 0.9],
        ] as [number, number][],
        spread: [0, 0.1, 0.05],
      },
      {
        name: 'ntpo',
        points: [
          [0, 0],
          [100, 0.2],
          [200, 0.4],
        ] as [number, number][],
      },
    ],
  };

  it('draws one polyline per series, a band for spreads, escaped text and a legend', () => {
    const svg = lineChartSvg(chart);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg.match(/<polygon/g)).toHaveLength(1);
    expect(svg).toContain('Return &lt;vs&gt; steps');
    expect(svg).toContain('>poad</text>');
    expect(svg.startsWith('<svg')).toBe(true);
  });

  it('draws a dashed series dashed, in its line and its legend entry, and the others solid', () => {
    const level = {
      name: 'prior',
      points: [
        [0, 0.3],
        [200, 0.3],
      ] as [number, number][],
      dashed: true,
    };
    const svg = lineChartSvg({ ...chart, series: [...chart.series, level] });
    const dashed = svg.split('\n').filter((l) => l.includes('stroke-dasharray'));
    expect(dashed).toHaveLength(2);
    expect(dashed[0]).toMatch(/^<polyline/);
    expect(dashed[1]).toMatch(/^<line/);
    expect(lineChartSvg(chart)).not.toContain('stroke-dasharray');
  });

  it('sizes the legend to its longest name, so long labels stay inside the chart', () => {
    const name = 'ntpo γw=0.95 (3 seeds), a long ablation label';
    const svg = lineChartSvg({ ...chart, series: [{ ...chart.series[0]!, name }] });
    const end = svg.indexOf(`>${name}</text>`);
    const x = Number(/x="([0-9.]+)"/.exec(svg.slice(svg.lastIndexOf('<text', end), end))![1]);
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    // ≈ 7 px per character at font size 12 must fit between the text start and the right edge.
    expect(x + 7 * name.length).toBeLessThanOrEqual(width);
    expect(x).toBeGreaterThan(0);
  });

  it('shrinks a title that would be wider than the chart, and keeps a short one at 15 px', () => {
    const size = (title: string) => {
      const svg = lineChartSvg({ ...chart, title });
      return Number(/font-size="(\d+)" font-weight="bold">/.exec(svg)![1]);
    };
    expect(size(chart.title)).toBe(15);
    const long =
      'datascicoding/iris: mean reward of the sampled programs (failure −1) (mean ± std over seeds)';
    // ≈ 0.63 em per bold character must fit in the 720 px chart.
    expect(size(long) * 0.63 * long.length).toBeLessThanOrEqual(720);
    expect(size(long)).toBeLessThan(15);
    expect(size('x'.repeat(500))).toBe(9);
  });

  it('puts the legend in the corner with the fewest curve samples, top right when it is free', () => {
    const rect = (svg: string) => {
      const r =
        /<rect x="([0-9.]+)" y="([0-9.]+)" width="\d+" height="\d+" fill="white" fill-opacity/.exec(
          svg,
        )!;
      return { x: Number(r[1]), y: Number(r[2]) };
    };
    const line = (name: string, ys: number[]) => ({
      name,
      points: ys.map((y, i) => [i, y] as [number, number]),
    });
    // Falling curves leave the top right free.
    const free = rect(lineChartSvg({ ...chart, series: [line('a', [1, 0.5, 0])] }));
    expect(free.x).toBeGreaterThan(360);
    expect(free.y).toBeLessThan(210);
    // A best-so-far curve along the top and a mean near the middle: the legend goes below them.
    const top = rect(
      lineChartSvg({
        ...chart,
        yRange: [-1, 1],
        series: [line('best reward', [0.98, 0.99, 1, 1]), line('mean', [0.5, 0.6, 0.55, 0.6])],
      }),
    );
    expect(top.y).toBeGreaterThan(210);
    // The legend text follows its box.
    const svg = lineChartSvg({ ...chart, yRange: [-1, 1], series: [line('best', [1, 1, 1])] });
    const textY = Number(/<text x="[0-9.]+" y="([0-9.]+)">best<\/text>/.exec(svg)![1]);
    expect(textY).toBeGreaterThan(rect(svg).y);
    expect(textY).toBeLessThan(rect(svg).y + 28);
  });

  it('legendCorner prefers top right, then the first free corner in its order', () => {
    const area = { l: 0, r: 100, t: 0, b: 100 };
    expect(legendCorner([], area, 20, 20)).toEqual({ x: 80, y: 0 });
    // A curve through the top-right corner only.
    expect(
      legendCorner(
        [
          [
            [70, 5],
            [100, 5],
          ],
        ],
        area,
        20,
        20,
      ),
    ).toEqual({ x: 4, y: 0 });
    // Curves along the whole top: a bottom corner, the right one first.
    expect(
      legendCorner(
        [
          [
            [0, 5],
            [100, 5],
          ],
        ],
        area,
        20,
        20,
      ),
    ).toEqual({ x: 80, y: 84 });
  });

  it('maps the data range into the plot area (higher y is drawn higher up)', () => {
    const svg = lineChartSvg({
      ...chart,
      series: [
        {
          name: 'a',
          points: [
            [0, 0],
            [1, 1],
          ],
        },
      ],
    });
    const pts = /<polyline points="([^"]+)"/
      .exec(svg)![1]!
      .split(' ')
      .map((p) => p.split(',').map(Number));
    expect(pts[1]![0]!).toBeGreaterThan(pts[0]![0]!);
    expect(pts[1]![1]!).toBeLessThan(pts[0]![1]!);
  });

  it('makes nice ticks', () => {
    expect(ticks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(0, 6000)).toEqual([0, 2000, 4000, 6000]);
  });

  it('renders PNG bytes with the PNG signature', async () => {
    const png = await svgToPng(lineChartSvg(chart));
    expect(Array.from(png.slice(0, 8))).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
    expect(png.length).toBeGreaterThan(2000);
  });

  it('colours token credit by sign', () => {
    const svg = tokenCreditSvg('credit', [
      { state: 'kitchen', tokens: ['open', 'fridge'], advantages: [0.5, -0.25] },
    ]);
    expect(svg).toContain('rgba(31,119,180,1.000)');
    expect(svg).toContain('rgba(214,39,40,0.500)');
    expect(svg).toContain('-0.250');
  });
});

describe('ProgressBar', () => {
  it('shows percentage, ETA from the rate so far, and live fields', () => {
    let t = 0;
    const out: string[] = [];
    const bar = new ProgressBar({
      total: 10,
      unit: 'it',
      now: () => t,
      lineIntervalMs: 0,
      stream: { write: (s: string) => out.push(s), isTTY: false },
    });
    t = 20_000;
    const text = bar.update(4, { return: 0.4567, success: '80%' });
    expect(text).toContain(' 40% 4/10 it');
    expect(text).toContain('ETA 30s');
    expect(text).toContain('return 0.457 | success 80%');
    expect(out).toHaveLength(1);
  });
  it('formats durations', () => {
    expect(formatDuration(42)).toBe('42s');
    expect(formatDuration(185)).toBe('3m05s');
    expect(formatDuration(3720)).toBe('1h02m');
    expect(formatDuration(Number.NaN)).toBe('--');
  });
});
