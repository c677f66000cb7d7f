import type { CreditAction, CreditOutcome, CreditState } from '../mdp.js';

/** The discount of every credit task (VirtualHome's: the presets' γ). */
export const CREDIT_GAMMA = 0.95;

/**
 * The continuation cue every running observation ends with. The embedded default model read
 * VirtualHome's prompts, which end the same way, so it continues this cue with an action.
 */
export const CUE = 'Your next step is to';

/** A label with a single, certain outcome. */
export function go(label: string, state: string, reward = 0): CreditAction {
  return { label, outcomes: [{ state, prob: 1, reward }] };
}

/** A label with several possible outcomes. */
export function chance(label: string, outcomes: readonly CreditOutcome[]): CreditAction {
  return { label, outcomes };
}

/** A state in which the agent acts: its sentences, then the cue. */
export function running(
  id: string,
  sentences: readonly string[],
  actions: readonly CreditAction[],
): CreditState {
  return {
    id,
    observation: [...sentences, CUE].join(' '),
    terminal: false,
    success: false,
    actions,
  };
}

/** A state that ends the episode. */
export function terminal(id: string, sentences: readonly string[], success: boolean): CreditState {
  return { id, observation: sentences.join(' '), terminal: true, success, actions: [] };
}
