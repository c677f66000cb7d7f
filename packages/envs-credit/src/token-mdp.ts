import type { TokenMdp } from '@poad/bellman';
import { CreditArgumentError } from './errors.js';
import { type CreditMdp, expectedReward, indexMdp } from './mdp.js';
import { resolveMdp } from './tasks.js';

/** A credit MDP as a `@poad/bellman` `TokenMdp`, with the maps back to ids and labels. */
export interface CreditTokenMdp {
  /** The MDP the tabular solvers of `@poad/bellman` take. */
  readonly tokenMdp: TokenMdp;
  /** `stateIds[s]` is the id of the token MDP's state s (the credit MDP's order). */
  readonly stateIds: readonly string[];
  /** `labels[s][a]` is the label of action a of state s. */
  readonly labels: readonly (readonly string[])[];
  /** The index of each state id. */
  readonly stateIndex: ReadonlyMap<string, number>;
}

/**
 * Turns a credit task's MDP into a `@poad/bellman` `TokenMdp`: the same states in the same order
 * (terminal states become states without actions), each label an action whose reward is the
 * expected reward Σ_o P(o)·r(o) and whose next-state distribution is the label's outcomes.
 *
 * By default each label is one token (its index in the state's list), which is all the
 * label-level solvers (`actionQIteration`) need. Pass `tokenize` to spell each label with
 * token ids of your own (a tokenizer's, or one id per word) and study the token-level backups
 * (`badQIteration`, `ntpoQIteration`) on the task; the labels of a state must then stay
 * prefix-free, which `@poad/bellman` checks.
 */
export function creditTokenMdp(
  task: string | CreditMdp,
  tokenize?: (label: string) => readonly number[],
): CreditTokenMdp {
  const mdp = resolveMdp(task, 'creditTokenMdp(task)');
  const { index } = indexMdp(mdp, 'creditTokenMdp(task)');
  const states = mdp.states.map((st) => ({
    actions: st.actions.map((act, a) => {
      const tokens = tokenize ? tokenize(act.label) : [a];
      if (!Array.isArray(tokens) || tokens.length === 0) {
        throw new CreditArgumentError(
          'creditTokenMdp(tokenize)',
          `tokenize(${JSON.stringify(act.label)}) must return a non-empty array of token ids.`,
        );
      }
      return {
        tokens,
        reward: expectedReward(act),
        next: act.outcomes.map((o) => ({ state: index.get(o.state)!, prob: o.prob })),
      };
    }),
  }));
  return {
    tokenMdp: { states },
    stateIds: mdp.states.map((st) => st.id),
    labels: mdp.states.map((st) => st.actions.map((a) => a.label)),
    stateIndex: index,
  };
}
