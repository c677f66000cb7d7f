/** One curve: points (x, y) and, optionally, a shaded band y ± spread (e.g. std over seeds). */
export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
  spread?: readonly number[];
  color?: string;
  /** Draw the line dashed (e.g. a reference level such as a baseline's value). */
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  /** Fixed y range; default: fitted to the data (and its bands). */
  yRange?: readonly [number, number];
  width?: number;
  height?: number;
}

const PALETTE = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
];

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** "Nice" tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

const fmt = (v: number) =>
  Math.abs(v) >= 1e4
    ? `${(v / 1e3).toFixed(0)}k`
    : Math.abs(v) >= 1000
      ? `${(v / 1e3).toFixed(1)}k`
      : String(Number(v.toPrecision(3)));

/**
 * Where a legend box of `w` × `h` px goes inside `area` (pixel edges): the corner whose box
 * covers the fewest samples of the plotted curves (each segment sampled every few pixels),
 * preferring top right, then top left, bottom right, bottom left. Returns the box's text origin
 * (its top-left corner plus the 4 px padding).
 */
export function legendCorner(
  curves: readonly (readonly (readonly [number, number])[])[],
  area: { l: number; r: number; t: number; b: number },
  w: number,
  h: number,
): { x: number; y: number } {
  const corners = [
    { x: area.r - w, y: area.t },
    { x: area.l + 4, y: area.t },
    { x: area.r - w, y: area.b - h + 4 },
    { x: area.l + 4, y: area.b - h + 4 },
  ];
  const samples: [number, number][] = [];
  for (const c of curves) {
    if (c.length === 1) samples.push([c[0]![0], c[0]![1]]);
    for (let i = 1; i < c.length; i++) {
      const [x0, y0] = c[i - 1]!;
      const [x1, y1] = c[i]!;
      const n = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 4));
      for (let k = 0; k < n; k++)
        samples.push([x0 + ((x1 - x0) * k) / n, y0 + ((y1 - y0) * k) / n]);
    }
    if (c.length > 1) samples.push([c.at(-1)![0], c.at(-1)![1]]);
  }
  const covered = (c: { x: number; y: number }) =>
    samples.filter(([x, y]) => x >= c.x - 4 && x <= c.x - 4 + w && y >= c.y - 4 && y <= c.y - 4 + h)
      .length;
  let best = corners[0]!;
  let fewest = covered(best);
  for (const c of corners.slice(1)) {
    const n = covered(c);
    if (n < fewest) {
      best = c;
      fewest = n;
    }
  }
  return best;
}

/**
 * The title's font size: 15 px, smaller (down to 9 px) when the title would be wider than `room`
 * (bold DejaVu Sans is about 0.63 em per character).
 */
function titleSize(title: string, room: number): number {
  return Math.max(9, Math.min(15, Math.floor(room / (0.63 * Math.max(1, title.length)))));
}

/** A line chart as a standalone SVG document (axes, ticks, legend, optional ± bands). */
export function lineChartSvg(chart: LineChart): string {
  const W = chart.width ?? 720;
  const H = chart.height ?? 420;
  const m = { l: 64, r: 16, t: 40, b: 52 };
  const all = chart.series.flatMap((s) =>
    s.points.map(([x, y], i) => [x, y, s.spread?.[i] ?? 0] as const),
  );
  const xs = all.map((p) => p[0]);
  const xLo = xs.length ? Math.min(...xs) : 0;
  const xHi = xs.length ? Math.max(...xs) : 1;
  let [yLo, yHi] = chart.yRange ?? [
    all.length ? Math.min(...all.map((p) => p[1] - p[2])) : 0,
    all.length ? Math.max(...all.map((p) => p[1] + p[2])) : 1,
  ];
  if (!(yHi > yLo)) {
    yLo -= 0.5;
    yHi += 0.5;
  }
  const xSpan = xHi > xLo ? xHi - xLo : 1;
  const sx = (x: number) => m.l + ((x - xLo) / xSpan) * (W - m.l - m.r);
  const sy = (y: number) => H - m.b - ((y - yLo) / (yHi - yLo)) * (H - m.t - m.b);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="${titleSize(chart.title, W - 16)}" font-weight="bold">${esc(chart.title)}</text>`,
  ];
  for (const t of ticks(yLo, yHi)) {
    parts.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${m.l - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`,
    );
  }
  for (const t of ticks(xLo, xHi)) {
    parts.push(
      `<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${H - m.b}" y2="${H - m.b + 4}" stroke="#333"/>`,
      `<text x="${sx(t).toFixed(1)}" y="${H - m.b + 18}" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  parts.push(
    `<line x1="${m.l}" x2="${W - m.r}" y1="${H - m.b}" y2="${H - m.b}" stroke="#333"/>`,
    `<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${H - m.b}" stroke="#333"/>`,
    `<text x="${(m.l + W - m.r) / 2}" y="${H - 12}" text-anchor="middle">${esc(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${(m.t + H - m.b) / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`,
  );
  // The legend box is as wide as its longest name (≈ 7 px per character at 12 px), on a
  // translucent white background, in the corner of the plot where the fewest curve samples lie
  // (top right on a tie), so that it hides as little of the curves as it can.
  const longest = Math.max(0, ...chart.series.map((s) => s.name.length));
  const legendW = 36 + 7 * longest;
  const legendH = chart.series.length * 16 + 8;
  const plotted = chart.series.map((s) => s.points.map(([x, y]) => [sx(x), sy(y)] as const));
  const { x: lx, y: ly0 } = legendCorner(
    plotted,
    { l: m.l + 8, r: W - m.r, t: m.t, b: H - m.b - 8 },
    legendW,
    legendH,
  );
  if (chart.series.length) {
    parts.push(
      `<rect x="${lx - 4}" y="${ly0 - 4}" width="${legendW}" height="${legendH}" fill="white" fill-opacity="0.8" stroke="#ccc"/>`,
    );
  }
  chart.series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length]!;
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    if (s.spread && s.points.length > 1) {
      const upper = s.points.map(
        ([x, y], j) => `${sx(x).toFixed(1)},${sy(y + (s.spread![j] ?? 0)).toFixed(1)}`,
      );
      const lower = s.points
        .map(([x, y], j) => `${sx(x).toFixed(1)},${sy(y - (s.spread![j] ?? 0)).toFixed(1)}`)
        .reverse();
      parts.push(
        `<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.18" stroke="none"/>`,
      );
    }
    if (s.points.length === 1) {
      const [x, y] = s.points[0]!;
      parts.push(
        `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"/>`,
      );
    } else if (s.points.length > 1) {
      const d = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      parts.push(`<polyline points="${d}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`);
    }
    const ly = ly0 + 8 + i * 16;
    parts.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="3"${dash}/>`,
      `<text x="${lx + 28}" y="${ly + 4}">${esc(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Tokens of one chosen action with their per-token advantages. */
export interface TokenCreditRow {
  /** Short description of the state (e.g. the last sentence of the observation). */
  state: string;
  tokens: readonly string[];
  advantages: readonly number[];
}

/**
 * An SVG "token credit" view: each row is one action, each token a box coloured by its
 * advantage (blue positive, red negative), with the value printed under it.
 */
export function tokenCreditSvg(title: string, rows: readonly TokenCreditRow[]): string {
  const maxAbs = Math.max(1e-9, ...rows.flatMap((r) => r.advantages.map(Math.abs)));
  const charW = 7.2;
  const rowH = 62;
  const widths = rows.map((r) =>
    r.tokens.reduce((w, t) => w + Math.max(28, t.length * charW + 10) + 4, 0),
  );
  const W = Math.max(480, 24 + Math.max(0, ...widths));
  const H = 40 + rows.length * rowH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W.toFixed(0)}" height="${H}" font-family="DejaVu Sans Mono, monospace" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="12" y="22" font-family="DejaVu Sans, sans-serif" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  rows.forEach((r, i) => {
    const y = 40 + i * rowH;
    parts.push(
      `<text x="12" y="${y + 10}" fill="#555" font-family="DejaVu Sans, sans-serif">${esc(r.state)}</text>`,
    );
    let x = 12;
    r.tokens.forEach((tok, k) => {
      const a = r.advantages[k] ?? 0;
      const w = Math.max(28, tok.length * charW + 10);
      const alpha = Math.min(1, Math.abs(a) / maxAbs);
      const fill =
        a >= 0 ? `rgba(31,119,180,${alpha.toFixed(3)})` : `rgba(214,39,40,${alpha.toFixed(3)})`;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y + 16}" width="${w.toFixed(1)}" height="22" rx="3" fill="${fill}" stroke="#999"/>`,
        `<text x="${(x + w / 2).toFixed(1)}" y="${y + 31}" text-anchor="middle">${esc(tok)}</text>`,
        `<text x="${(x + w / 2).toFixed(1)}" y="${y + 51}" text-anchor="middle" font-size="10" fill="#333">${a.toFixed(3)}</text>`,
      );
      x += w + 4;
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
