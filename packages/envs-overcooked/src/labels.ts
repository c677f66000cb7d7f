import type { OvercookedTask } from './tasks.js';
import type { MacroView } from './view.js';

const ORDINAL = ['first', 'second'] as const;

/**
 * The action labels, one per macro-action in environment order. They depend on what the agent
 * holds and where it stands:
 *
 * - food macro: `pick up the X`, or `put the X in the bowl` while holding the bowl;
 * - plate macro: `take the bowl` (v4); v3 says `take the empty bowl` until some bucket (the
 *   agent or a board) holds more than one item;
 * - knife macro: `walk to the cutting board` (v4) / `walk to the first|second cutting board`
 *   (v3); holding an unchopped food or the bowl it becomes `put the X|bowl on the ... board`;
 * - deliver: `serve nothing`, or `serve the dish` while holding anything;
 * - chop: `chop nothing`, or `chop the X` when the agent stands in front of a board that holds
 *   exactly one food (even a food that is already chopped).
 */
export function macroLabels(task: OvercookedTask, view: MacroView): string[] {
  const v3 = task.version === 'v3';
  const labels: string[] = [];
  const holdsBowl = view.held.some((i) => view.items[i]?.name === 'bowl');
  const holdsOne = view.held.length === 1 ? view.items[view.held[0] as number] : undefined;
  const holdsUnchoppedFood =
    holdsOne !== undefined && holdsOne.name !== 'bowl' && !holdsOne.chopped;
  const crowded = view.held.length > 1 || view.boards.some((b) => b.length > 1);

  for (const macro of task.macros) {
    switch (macro.type) {
      case 'food':
        labels.push(holdsBowl ? `put the ${macro.food} in the bowl` : `pick up the ${macro.food}`);
        break;
      case 'plate':
        labels.push(v3 && !crowded ? 'take the empty bowl' : 'take the bowl');
        break;
      case 'knife': {
        const board = v3 ? `the ${ORDINAL[macro.knife]} cutting board` : 'the cutting board';
        if (holdsBowl) labels.push(`put the bowl on ${board}`);
        else if (holdsUnchoppedFood) labels.push(`put the ${holdsOne.name} on ${board}`);
        else labels.push(`walk to ${board}`);
        break;
      }
      case 'deliver':
        labels.push(view.held.length > 0 ? 'serve the dish' : 'serve nothing');
        break;
      case 'chop':
        labels.push(chopLabel(task, view));
        break;
    }
  }
  return labels;
}

function chopLabel(task: OvercookedTask, view: MacroView): string {
  let label = 'chop nothing';
  view.boards.forEach((onBoard, b) => {
    const knife = task.knives[b] as readonly [number, number];
    if (onBoard.length !== 1) return;
    const item = view.items[onBoard[0] as number];
    if (!item || item.name === 'bowl') return;
    if (view.agentX === knife[0] && view.agentY === knife[1] + 1) label = `chop the ${item.name}`;
  });
  return label;
}
