import { CELL, GRID } from './codes.js';
import type { ItemSnapshot, OvercookedSnapshot } from './snapshot.js';

const SIZE = 56;
const COLORS = {
  floor: '#f4efe6',
  counter: '#c8a27a',
  board: '#8d99ae',
  delivery: '#7fb069',
  agent: '#3a6ea5',
  tomato: '#d62828',
  lettuce: '#52b788',
  onion: '#b5838d',
  bowl: '#ffffff',
} as const;

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function itemSvg(item: ItemSnapshot, cx: number, cy: number, r: number): string {
  if (item.type === 'bowl') {
    const parts = [
      `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${COLORS.bowl}" stroke="#555" stroke-width="2"/>`,
    ];
    item.contents.forEach((kind, i) => {
      const dx = (i - (item.contents.length - 1) / 2) * r * 0.7;
      parts.push(
        `<circle cx="${cx + dx}" cy="${cy}" r="${r * 0.35}" fill="${COLORS[kind]}" stroke="#333" stroke-width="1"/>`,
      );
    });
    return parts.join('');
  }
  const color = COLORS[item.kind];
  const shape = item.chopped
    ? `<rect x="${cx - r}" y="${cy - r * 0.6}" width="${2 * r}" height="${1.2 * r}" rx="4" fill="${color}" stroke="#333" stroke-width="1.5"/>`
    : `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${color}" stroke="#333" stroke-width="1.5"/>`;
  const label = `<text x="${cx}" y="${cy + 4}" font-size="11" text-anchor="middle" fill="#fff" font-family="sans-serif">${item.kind[0]}${item.chopped ? '*' : ''}</text>`;
  return shape + label;
}

/**
 * An SVG picture of the true state (cells as squares: counters, floor, cutting boards,
 * delivery; the agent as a blue disc carrying its item; chopped food drawn as a rounded bar).
 * Returns the SVG document as a string.
 */
export function renderSvg(s: OvercookedSnapshot, title = s.taskId): string {
  const width = GRID * SIZE;
  const height = GRID * SIZE + 28;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${esc(title)}</title>`,
  ];
  const placed: { x: number; y: number; item: ItemSnapshot }[] = [];
  for (const f of s.foods) {
    if (s.cells[f.x]?.[f.y] === CELL[f.kind])
      placed.push({ x: f.x, y: f.y, item: { type: 'food', ...f } });
  }
  if (s.cells[s.bowl.x]?.[s.bowl.y] === CELL.plate) {
    placed.push({ x: s.bowl.x, y: s.bowl.y, item: { type: 'bowl', contents: s.bowl.contents } });
  }
  for (let x = 0; x < GRID; x++) {
    for (let y = 0; y < GRID; y++) {
      const code = s.cells[x]?.[y];
      let fill: string = code === CELL.floor || code === CELL.agent ? COLORS.floor : COLORS.counter;
      if (s.boards.some((b) => b.x === x && b.y === y)) fill = COLORS.board;
      if (s.delivery.x === x && s.delivery.y === y) fill = COLORS.delivery;
      out.push(
        `<rect x="${y * SIZE}" y="${x * SIZE}" width="${SIZE}" height="${SIZE}" fill="${fill}" stroke="#6b5b4b" stroke-width="1"/>`,
      );
    }
  }
  const centre = (x: number, y: number): [number, number] => [
    y * SIZE + SIZE / 2,
    x * SIZE + SIZE / 2,
  ];
  for (const p of placed) {
    const [cx, cy] = centre(p.x, p.y);
    out.push(itemSvg(p.item, cx, cy, SIZE * 0.3));
  }
  for (const station of [...s.boards, s.delivery]) {
    if (station.holding) {
      const [cx, cy] = centre(station.x, station.y);
      out.push(itemSvg(station.holding, cx, cy, SIZE * 0.3));
    }
  }
  const [ax, ay] = centre(s.agent.x, s.agent.y);
  out.push(`<circle cx="${ax}" cy="${ay}" r="${SIZE * 0.38}" fill="${COLORS.agent}"/>`);
  if (s.agent.holding) out.push(itemSvg(s.agent.holding, ax, ay, SIZE * 0.22));
  out.push(
    `<text x="6" y="${GRID * SIZE + 19}" font-size="14" font-family="sans-serif" fill="#222">${esc(
      `${title} - primitive step ${s.primitiveSteps}`,
    )}</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
