/**
 * A small finite MDP whose actions are token sequences, for analysing the backups exactly.
 *
 * Each state lists its actions; each action is a non-empty token sequence with a reward and a
 * distribution over next states. Probabilities may sum to less than 1: the missing mass ends the
 * episode (value 0). A state without actions is terminal. Within a state no action may be a
 * prefix of another, so the token at which an action ends is never ambiguous.
 */
export interface TokenAction {
  tokens: readonly number[];
  reward: number;
  next: readonly { state: number; prob: number }[];
}

export interface TokenMdpState {
  actions: readonly TokenAction[];
}

export interface TokenMdp {
  states: readonly TokenMdpState[];
}

/**
 * The token trie of one state. Node 0 is the root (the observation with no tokens yet); every
 * other node is reached by one token from its parent. Nodes are numbered so that a parent comes
 * before its children.
 */
export interface TokenTrie {
  parent: Int32Array;
  token: Int32Array;
  depth: Int32Array;
  /** Index of the action this node completes, or -1 for an inner node (and the root). */
  action: Int32Array;
  /** Children of each node, in order of first appearance. */
  children: readonly (readonly number[])[];
  /** Node reached by the last token of each action. */
  actionNode: Int32Array;
}

/** Thrown for a malformed `TokenMdp`; the message names the state and action. */
export class TokenMdpError extends TypeError {
  override readonly name = 'TokenMdpError';
}

/** Builds the token trie of one state's actions (throws TokenMdpError if not prefix-free). */
export function buildTokenTrie(actions: readonly TokenAction[], stateIndex = 0): TokenTrie {
  const parent: number[] = [-1];
  const token: number[] = [-1];
  const depth: number[] = [0];
  const action: number[] = [-1];
  const children: number[][] = [[]];
  const actionNode = new Int32Array(actions.length);
  for (let a = 0; a < actions.length; a++) {
    const tokens = (actions[a] as TokenAction).tokens;
    let node = 0;
    for (let j = 0; j < tokens.length; j++) {
      const w = tokens[j] as number;
      if (action[node] !== -1) {
        throw new TokenMdpError(
          `states[${stateIndex}]: action ${action[node]} is a prefix of action ${a}; actions of a state must be prefix-free (end them with a distinct stop token)`,
        );
      }
      let child = -1;
      for (const c of children[node] as number[]) {
        if (token[c] === w) {
          child = c;
          break;
        }
      }
      if (child === -1) {
        child = parent.length;
        parent.push(node);
        token.push(w);
        depth.push(j + 1);
        action.push(-1);
        children.push([]);
        (children[node] as number[]).push(child);
      }
      node = child;
    }
    if (action[node] !== -1) {
      throw new TokenMdpError(`states[${stateIndex}].actions[${a}] repeats action ${action[node]}`);
    }
    if ((children[node] as number[]).length > 0) {
      throw new TokenMdpError(
        `states[${stateIndex}].actions[${a}] is a prefix of another action; actions of a state must be prefix-free`,
      );
    }
    action[node] = a;
    actionNode[a] = node;
  }
  return {
    parent: Int32Array.from(parent),
    token: Int32Array.from(token),
    depth: Int32Array.from(depth),
    action: Int32Array.from(action),
    children,
    actionNode,
  };
}

/** Checks a TokenMdp and builds the trie of every state. */
export function buildTries(mdp: TokenMdp): TokenTrie[] {
  if (mdp === null || typeof mdp !== 'object' || !Array.isArray(mdp.states)) {
    throw new TokenMdpError('TokenMdp must be an object with a `states` array');
  }
  const S = mdp.states.length;
  return mdp.states.map((state, s) => {
    if (!state || !Array.isArray(state.actions)) {
      throw new TokenMdpError(`states[${s}].actions must be an array (empty for a terminal state)`);
    }
    (state.actions as readonly TokenAction[]).forEach((a, i) => {
      const where = `states[${s}].actions[${i}]`;
      if (!Array.isArray(a.tokens) || a.tokens.length === 0) {
        throw new TokenMdpError(`${where}.tokens must be a non-empty array of token ids`);
      }
      if (!a.tokens.every((w) => Number.isInteger(w))) {
        throw new TokenMdpError(`${where}.tokens must hold integer token ids`);
      }
      if (!Number.isFinite(a.reward)) throw new TokenMdpError(`${where}.reward must be finite`);
      let total = 0;
      for (const n of a.next) {
        if (!Number.isInteger(n.state) || n.state < 0 || n.state >= S) {
          throw new TokenMdpError(`${where}.next has state ${n.state}, outside 0..${S - 1}`);
        }
        if (!(n.prob >= 0 && n.prob <= 1)) {
          throw new TokenMdpError(`${where}.next has probability ${n.prob}, outside [0, 1]`);
        }
        total += n.prob;
      }
      if (total > 1 + 1e-9) {
        throw new TokenMdpError(`${where}.next probabilities sum to ${total} > 1`);
      }
    });
    return buildTokenTrie(state.actions as readonly TokenAction[], s);
  });
}

/** Nodes of a trie from deepest to shallowest (children before parents). */
export function bottomUpOrder(trie: TokenTrie): Int32Array {
  const order = Int32Array.from(trie.depth.keys());
  order.sort((a, b) => (trie.depth[b] as number) - (trie.depth[a] as number));
  return order;
}

/** Σ_s' P(s'|s,a)·V(s'). */
export function expectedNext(a: TokenAction, v: ArrayLike<number>): number {
  let e = 0;
  for (const n of a.next) e += n.prob * (v[n.state] as number);
  return e;
}
