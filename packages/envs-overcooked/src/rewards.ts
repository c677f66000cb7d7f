/**
 * Reward values of one primitive step. The defaults are those of the paper's runs
 * (subtask 0.2, correct delivery 1, wrong delivery -0.1, step -0.001).
 */
export interface OvercookedRewards {
  /** Added when a food named in the recipe becomes chopped (third chop). */
  subtask: number;
  /** Added when the right dish is delivered (the episode then ends). */
  correctDelivery: number;
  /** Added when anything else is delivered (the items go back to their start cells). */
  wrongDelivery: number;
  /** Added on every primitive step (a negative number is a cost). */
  step: number;
}

/** The rewards of the paper's Overcooked runs. */
export const DEFAULT_REWARDS: Readonly<OvercookedRewards> = Object.freeze({
  subtask: 0.2,
  correctDelivery: 1,
  wrongDelivery: -0.1,
  step: -0.001,
});

/** Discount applied per primitive step inside a macro-action and in the logged return. */
export const PRIMITIVE_DISCOUNT = 0.99;
