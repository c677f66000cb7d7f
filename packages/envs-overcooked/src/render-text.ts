import { CELL, GRID } from './codes.js';
import type { ItemSnapshot, OvercookedSnapshot } from './snapshot.js';

const FOOD_LETTER = { tomato: 't', lettuce: 'l', onion: 'o' } as const;

/** One letter per item: foods t/l/o (upper case once chopped), the bowl b (B with food in it). */
function itemLetter(item: ItemSnapshot | null): string {
  if (item === null) return ' ';
  if (item.type === 'bowl') return item.contents.length > 0 ? 'B' : 'b';
  const letter = FOOD_LETTER[item.kind];
  return item.chopped ? letter.toUpperCase() : letter;
}

function describe(item: ItemSnapshot | null): string {
  if (item === null) return 'nothing';
  if (item.type === 'bowl') {
    return item.contents.length > 0 ? `bowl with ${item.contents.join(', ')}` : 'empty bowl';
  }
  return `${item.chopped ? 'chopped' : `unchopped (${item.chops}/3)`} ${item.kind}`;
}

/**
 * A text picture of the true state: each cell is a station letter (`#` counter, `.` floor,
 * `K` cutting board, `D` delivery, `@` agent) followed by the item on it (t/l/o foods, upper
 * case when chopped; b bowl, B bowl with food), then one line per holder.
 */
export function renderText(s: OvercookedSnapshot): string {
  const onCounter = new Map<string, string>();
  for (const f of s.foods) {
    if (s.cells[f.x]?.[f.y] === CELL[f.kind]) {
      onCounter.set(`${f.x},${f.y}`, itemLetter({ type: 'food', ...f }));
    }
  }
  if (s.cells[s.bowl.x]?.[s.bowl.y] === CELL.plate) {
    onCounter.set(
      `${s.bowl.x},${s.bowl.y}`,
      itemLetter({ type: 'bowl', contents: s.bowl.contents }),
    );
  }
  const lines: string[] = [];
  for (let x = 0; x < GRID; x++) {
    let line = '';
    for (let y = 0; y < GRID; y++) {
      const code = s.cells[x]?.[y] as number;
      let station = code === CELL.floor ? '.' : '#';
      let item = onCounter.get(`${x},${y}`) ?? ' ';
      const board = s.boards.find((b) => b.x === x && b.y === y);
      if (board) {
        station = 'K';
        item = itemLetter(board.holding);
      } else if (s.delivery.x === x && s.delivery.y === y) {
        station = 'D';
        item = itemLetter(s.delivery.holding);
      } else if (s.agent.x === x && s.agent.y === y) {
        station = '@';
        item = itemLetter(s.agent.holding);
      }
      line += `${station}${item} `;
    }
    lines.push(line.trimEnd());
  }
  lines.push(`agent at (${s.agent.x},${s.agent.y}) holds ${describe(s.agent.holding)}`);
  s.boards.forEach((b, i) => {
    lines.push(`cutting board ${i + 1} at (${b.x},${b.y}) holds ${describe(b.holding)}`);
  });
  lines.push(`primitive steps: ${s.primitiveSteps}`);
  return lines.join('\n');
}
