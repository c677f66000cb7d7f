import type { TokenQTable } from './tokenQIteration.js';

/**
 * Decodes an action token by token, always taking the child with the highest token-level Q
 * (ties go to the first child). Returns the action index and its tokens.
 */
export function greedyTokenDecode(
  table: TokenQTable,
  s: number,
): { action: number; tokens: number[] } {
  const trie = table.tries[s];
  if (!trie) throw new RangeError(`greedyTokenDecode: state ${s} does not exist`);
  const q = table.q[s]!;
  const tokens: number[] = [];
  let node = 0;
  if (trie.children[0]!.length === 0) {
    throw new RangeError(`greedyTokenDecode: state ${s} is terminal (it has no actions)`);
  }
  while (trie.action[node] === -1) {
    let best = -1;
    for (const c of trie.children[node]!) if (best === -1 || q[c]! > q[best]!) best = c;
    node = best;
    tokens.push(trie.token[node]!);
  }
  return { action: trie.action[node]!, tokens };
}
