import type { OvercookedTask } from './tasks.js';
import type { MacroView, SeenItem } from './view.js';

function withArticle(name: string): string {
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

function describeStack(view: MacroView, stack: readonly number[]): string {
  const items = stack.map((i) => view.items[i] as SeenItem);
  const bowl = items.find((it) => it.name === 'bowl');
  if (bowl) {
    const foods = items.filter((it) => it.name !== 'bowl').map((it) => it.name);
    return foods.length === 0 ? 'an empty bowl' : `a bowl with chopped ${listWords(foods)} in it`;
  }
  const food = items[0] as SeenItem;
  return `${food.chopped ? 'a chopped' : 'an unchopped'} ${food.name}`;
}

/**
 * The prompt shown to the agent: the cutting boards, the items seen on their start counters,
 * what lies on each visible board, where the agent stands and what it carries, and the goal,
 * ending with a cue for the next action.
 */
export function observationText(task: OvercookedTask, view: MacroView): string {
  const two = task.knives.length === 2;
  const boardName = (b: number): string =>
    two ? `the ${b === 0 ? 'first' : 'second'} cutting board` : 'the cutting board';
  const sentences: string[] = [
    two
      ? 'You are in a kitchen with two cutting boards fixed to the counters.'
      : 'You are in a kitchen with one cutting board fixed to a counter.',
  ];

  const seen = view.items.filter((it) => it.atStart).map((it) => withArticle(it.name));
  if (seen.length === 1) sentences.push(`You can see ${seen[0]} waiting on its counter.`);
  else if (seen.length > 1) {
    sentences.push(`You can see ${listWords(seen)} waiting on their counters.`);
  }

  view.boards.forEach((stack, b) => {
    if (stack.length === 0) return;
    const name = boardName(b);
    sentences.push(`On ${name} lies ${describeStack(view, stack)}.`);
  });

  let where = '';
  task.knives.forEach(([kx, ky], b) => {
    if (view.agentX === kx && view.agentY === ky + 1) where = ` in front of ${boardName(b)}`;
  });
  if (view.held.length === 0) sentences.push(`You stand${where} with empty hands.`);
  else sentences.push(`You stand${where} holding ${describeStack(view, view.held)}.`);

  const goal = listWords(task.goalFoods.map((f) => f));
  sentences.push(
    `Your order is a bowl with only chopped ${goal} in it, brought to the serving counter. Your next step is to`,
  );
  return sentences.join(' ');
}
